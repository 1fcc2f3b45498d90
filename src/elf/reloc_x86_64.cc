// x86_64 relocation types (System V psABI, table 4.9). Only what a shared
// object needs at load time; TLS and IFUNC relocations are refused by number.
#include <elf.h>

#include <limits>

#include "elf_reloc.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

namespace {

template <typename T>
void write_checked(RelocContext& ctx, const Relocation& r, int64_t value) {
  // The 32-bit forms must not silently truncate: a truncated address would be
  // a wild pointer at run time.
  if (value < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      value > static_cast<int64_t>(std::numeric_limits<T>::max()))
    throw Error("relocation value does not fit in 32 bits").with("reloc_type", std::to_string(r.type));
  ctx.image().write<T>(r.offset, static_cast<T>(value), "relocation place");
}

}  // namespace

void apply_reloc_x86_64(const Relocation& r, RelocContext& ctx) {
  switch (r.type) {
    case R_X86_64_NONE:
      return;
    case R_X86_64_64:
      ctx.image().write<uint64_t>(r.offset, ctx.S(r) + ctx.A<uint64_t>(r), "relocation place");
      return;
    case R_X86_64_GLOB_DAT:
    case R_X86_64_JUMP_SLOT:  // no lazy binding: the slot gets the final address
      ctx.image().write<uint64_t>(r.offset, ctx.S(r), "relocation place");
      return;
    case R_X86_64_RELATIVE:
      ctx.image().write<uint64_t>(r.offset, ctx.B() + ctx.A<uint64_t>(r), "relocation place");
      return;
    case R_X86_64_PC32:
      write_checked<int32_t>(ctx, r, static_cast<int64_t>(ctx.S(r) + ctx.A<int32_t>(r) - ctx.P(r)));
      return;
    case R_X86_64_32: {
      const uint64_t v = ctx.S(r) + ctx.A<uint32_t>(r);
      if (v > std::numeric_limits<uint32_t>::max()) throw Error("R_X86_64_32 value does not fit in 32 bits");
      ctx.image().write<uint32_t>(r.offset, static_cast<uint32_t>(v), "relocation place");
      return;
    }
    case R_X86_64_32S:
      write_checked<int32_t>(ctx, r, static_cast<int64_t>(ctx.S(r) + ctx.A<int32_t>(r)));
      return;
    case R_X86_64_PC64:
      ctx.image().write<uint64_t>(r.offset, ctx.S(r) + ctx.A<uint64_t>(r) - ctx.P(r), "relocation place");
      return;
    default:
      throw unsupported_reloc(EM_X86_64, r.type);
  }
}

}  // namespace elf
}  // namespace graphrt
