#include "reloc_x86_64.h"

#include <elf.h>

#include <cstring>
#include <limits>

#include "elf_reloc.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

namespace {

template <typename T>
void store(uint8_t* place, size_t room, uint32_t type, T value) {
  if (room < sizeof(T)) throw Error("relocation place runs past the end of its section").with("reloc_type", std::to_string(type));
  std::memcpy(place, &value, sizeof(T));
}

// Signed (PC-relative, 32S) fields must not silently truncate: a truncated
// address is a wild pointer at run time.
template <typename T>
void store_signed(uint8_t* place, size_t room, uint32_t type, int64_t value) {
  if (value < int64_t(std::numeric_limits<T>::min()) || value > int64_t(std::numeric_limits<T>::max()))
    throw Error("relocation value " + std::to_string(value) + " does not fit in " + std::to_string(8 * sizeof(T)) +
                " bits (target too far from the code)")
        .with("reloc_type", std::to_string(type));
  store<T>(place, room, type, static_cast<T>(value));
}

template <typename T>
void store_unsigned(uint8_t* place, size_t room, uint32_t type, uint64_t value) {
  if (value > uint64_t(std::numeric_limits<T>::max()))
    throw Error("relocation value does not fit in " + std::to_string(8 * sizeof(T)) +
                " unsigned bits (the object needs position-independent code)")
        .with("reloc_type", std::to_string(type));
  store<T>(place, room, type, static_cast<T>(value));
}

bool fits_int32(int64_t v) { return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(); }

bool dynamic_only(uint32_t type) {
  return type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT || type == R_X86_64_RELATIVE;
}

// What a shared object's dynamic tables may hold besides the dynamic-only types.
bool in_dynamic_set(uint32_t type) {
  return dynamic_only(type) || type == R_X86_64_NONE || type == R_X86_64_64 || type == R_X86_64_PC32 ||
         type == R_X86_64_32 || type == R_X86_64_32S || type == R_X86_64_PC64;
}

bool in_set(X86_64RelocSet set, uint32_t type) {
  return set == X86_64RelocSet::kDynamic ? in_dynamic_set(type) : !dynamic_only(type);
}

}  // namespace

size_t x86_64_reloc_field_bytes(uint32_t type) {
  switch (type) {
    case R_X86_64_64: case R_X86_64_GLOB_DAT: case R_X86_64_JUMP_SLOT: case R_X86_64_RELATIVE:
    case R_X86_64_PC64: case R_X86_64_GOTPCREL64: case R_X86_64_GOT64: case R_X86_64_GOTPC64:
    case R_X86_64_GOTOFF64: case R_X86_64_SIZE64:
      return 8;
    case R_X86_64_PC32: case R_X86_64_PLT32: case R_X86_64_32: case R_X86_64_32S: case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX: case R_X86_64_REX_GOTPCRELX: case R_X86_64_GOT32: case R_X86_64_GOTPC32:
    case R_X86_64_SIZE32:
      return 4;
    case R_X86_64_16: case R_X86_64_PC16:
      return 2;
    case R_X86_64_8: case R_X86_64_PC8:
      return 1;
    default:
      return 0;
  }
}

bool needs_got_slot_x86_64(uint32_t type) {
  return type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX ||
         type == R_X86_64_GOTPCREL64 || type == R_X86_64_GOT64 || type == R_X86_64_GOT32;
}

bool may_use_stub_x86_64(uint32_t type) { return type == R_X86_64_PLT32; }

void write_stub_x86_64(uint8_t* stub, uint64_t target) {
  static const uint8_t kJmpRip[6] = {0xff, 0x25, 0x00, 0x00, 0x00, 0x00};  // jmp *0(%rip)
  std::memcpy(stub, kJmpRip, sizeof(kJmpRip));
  std::memcpy(stub + 6, &target, 8);
  stub[14] = stub[15] = 0xcc;  // int3 padding
}

void apply_x86_64_reloc(X86_64RelocSet set, uint32_t type, const X86_64RelocValues& v, uint8_t* place, size_t room) {
  if (!in_set(set, type)) throw unsupported_reloc(EM_X86_64, type);
  // Address arithmetic is modulo 2^64 (unsigned, so corrupt addends cannot
  // overflow a signed type); results are then read as signed where the field is.
  const uint64_t S = v.S, P = v.P, GOT = v.GOT, A = static_cast<uint64_t>(v.A);
  const uint64_t G = v.got_slot;  // the absolute slot address, G + GOT in the psABI's terms
  const auto sgn = [](uint64_t x) { return static_cast<int64_t>(x); };
  switch (type) {
    case R_X86_64_NONE:
      return;
    case R_X86_64_64:
      return store<uint64_t>(place, room, type, S + A);
    case R_X86_64_GLOB_DAT:
    case R_X86_64_JUMP_SLOT:  // no lazy binding: the slot gets the final address
      return store<uint64_t>(place, room, type, S);
    case R_X86_64_RELATIVE:
      return store<uint64_t>(place, room, type, v.B + A);
    case R_X86_64_PC32:
      return store_signed<int32_t>(place, room, type, sgn(S + A - P));
    case R_X86_64_PLT32: {
      // Direct when the target is within reach, else through the stub.
      const int64_t direct = sgn(S + A - P);
      if (fits_int32(direct) || v.stub == 0) return store_signed<int32_t>(place, room, type, direct);
      return store_signed<int32_t>(place, room, type, sgn(v.stub + A - P));
    }
    case R_X86_64_32:
      return store_unsigned<uint32_t>(place, room, type, S + A);
    case R_X86_64_32S:
      return store_signed<int32_t>(place, room, type, sgn(S + A));
    case R_X86_64_16:
      return store_unsigned<uint16_t>(place, room, type, S + A);
    case R_X86_64_PC16:
      return store_signed<int16_t>(place, room, type, sgn(S + A - P));
    case R_X86_64_8:
      return store_unsigned<uint8_t>(place, room, type, S + A);
    case R_X86_64_PC8:
      return store_signed<int8_t>(place, room, type, sgn(S + A - P));
    case R_X86_64_PC64:
      return store<uint64_t>(place, room, type, S + A - P);
    case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX:  // relaxation is optional; the GOT load is always correct
    case R_X86_64_REX_GOTPCRELX:
      return store_signed<int32_t>(place, room, type, sgn(G + A - P));
    case R_X86_64_GOTPCREL64:
      return store<uint64_t>(place, room, type, G + A - P);
    case R_X86_64_GOT32:
      return store_signed<int32_t>(place, room, type, sgn(G - GOT + A));
    case R_X86_64_GOT64:
      return store<uint64_t>(place, room, type, G - GOT + A);
    case R_X86_64_GOTPC32:
      return store_signed<int32_t>(place, room, type, sgn(GOT + A - P));
    case R_X86_64_GOTPC64:
      return store<uint64_t>(place, room, type, GOT + A - P);
    case R_X86_64_GOTOFF64:
      return store<uint64_t>(place, room, type, S + A - GOT);
    case R_X86_64_SIZE32:
      return store_unsigned<uint32_t>(place, room, type, v.Z + A);
    case R_X86_64_SIZE64:
      return store<uint64_t>(place, room, type, v.Z + A);
    default:
      throw unsupported_reloc(EM_X86_64, type);
  }
}

}  // namespace elf
}  // namespace graphrt
