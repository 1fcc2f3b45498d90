// AArch64 dynamic relocation types (ELF for the Arm 64-bit Architecture,
// "Dynamic relocations"). Relocate-only on an x86_64 host: these are plain
// 64-bit data writes, so they can be applied and checked without running code.
#include <elf.h>

#include "elf_reloc.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

void apply_reloc_aarch64(const Relocation& r, RelocContext& ctx) {
  switch (r.type) {
    case R_AARCH64_NONE:
      return;
    case R_AARCH64_ABS64:  // S + A, assigned (RELA semantics), not added to the place
      ctx.image().write<uint64_t>(r.offset, ctx.S(r) + ctx.A<uint64_t>(r), "relocation place");
      return;
    case R_AARCH64_GLOB_DAT:
    case R_AARCH64_JUMP_SLOT:
      ctx.image().write<uint64_t>(r.offset, ctx.S(r) + ctx.A<uint64_t>(r), "relocation place");
      return;
    case R_AARCH64_RELATIVE:
      ctx.image().write<uint64_t>(r.offset, ctx.B() + ctx.A<uint64_t>(r), "relocation place");
      return;
    case R_AARCH64_PREL64:
      ctx.image().write<uint64_t>(r.offset, ctx.S(r) + ctx.A<uint64_t>(r) - ctx.P(r), "relocation place");
      return;
    default:
      throw unsupported_reloc(EM_AARCH64, r.type);
  }
}

}  // namespace elf
}  // namespace graphrt
