// The x86_64 relocation engine (System V psABI, table 4.9), one for both
// users: the dynamic relocations of a shared object the `elf` loader maps
// (apply_reloc_x86_64 in elf_reloc.h, the dynamic subset) and the static-link
// relocations of the objects the `elf-object` loader links (the subset LLVM's
// object files use, GOT-relative and PLT forms included; that loader builds
// the GOT and the call stubs itself).
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphrt {
namespace elf {

// Everything one relocation's formula may need, as host addresses.
struct X86_64RelocValues {
  uint64_t P = 0;         // the place being patched
  uint64_t S = 0;         // the symbol
  int64_t A = 0;          // the addend
  uint64_t B = 0;         // the image's load bias (R_X86_64_RELATIVE)
  uint64_t Z = 0;         // the symbol's size (R_X86_64_SIZE*)
  uint64_t GOT = 0;       // start of the image's GOT
  uint64_t got_slot = 0;  // the symbol's GOT slot (types for which needs_got_slot_x86_64())
  uint64_t stub = 0;      // a jump stub to S, 0 when the symbol has none
};

// Which relocations a user accepts: a shared object's dynamic ones, or a
// relocatable object's static-link ones. Any other type is refused by name.
enum class X86_64RelocSet { kDynamic, kObject };

// Bytes of the field a type patches (0: none, or a type outside both sets).
size_t x86_64_reloc_field_bytes(uint32_t type);

// Patches `place` (with `room` bytes before the end of its section). Throws
// graphrt::Error for a type outside `set` and for values that do not fit.
void apply_x86_64_reloc(X86_64RelocSet set, uint32_t type, const X86_64RelocValues& v, uint8_t* place, size_t room);

bool needs_got_slot_x86_64(uint32_t type);
// Types that may reach a far (imported) function through a stub.
bool may_use_stub_x86_64(uint32_t type);

// Size of one jump stub, and its code: an indirect jump through the 8 bytes
// that follow it, so a stub reaches any 64-bit address.
constexpr size_t kStubSize = 16;
void write_stub_x86_64(uint8_t* stub, uint64_t target);

}  // namespace elf
}  // namespace graphrt
