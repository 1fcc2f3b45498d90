// Relocation formulas for linking relocatable objects (ET_REL) into one
// image: the static-link subset of the x86_64 psABI that LLVM's object files
// use, including the GOT-relative and PLT forms (the loader builds the GOT
// and the call stubs itself).
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphrt {
namespace elf {

// Everything one relocation's formula may need, as host addresses.
struct ObjectRelocValues {
  uint64_t P = 0;         // the place being patched
  uint64_t S = 0;         // the symbol
  int64_t A = 0;          // the addend
  uint64_t Z = 0;         // the symbol's size (R_X86_64_SIZE*)
  uint64_t GOT = 0;       // start of the image's GOT
  uint64_t got_slot = 0;  // the symbol's GOT slot (types for which needs_got_slot())
  uint64_t stub = 0;      // a jump stub to S, 0 when the symbol has none
};

bool needs_got_slot_x86_64(uint32_t type);
// Types that may reach a far (imported) function through a stub.
bool may_use_stub_x86_64(uint32_t type);

// Patches `place` (with `room` bytes before the end of its section). Throws
// graphrt::Error for unsupported types and for values that do not fit.
void apply_object_reloc_x86_64(uint32_t type, const ObjectRelocValues& v, uint8_t* place, size_t room);

// Size of one jump stub, and its code: an indirect jump through the 8 bytes
// that follow it, so a stub reaches any 64-bit address.
constexpr size_t kStubSize = 16;
void write_stub_x86_64(uint8_t* stub, uint64_t target);

}  // namespace elf
}  // namespace graphrt
