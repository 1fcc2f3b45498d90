// Relocation processing: table walking is shared, the meaning of each type is
// per architecture (reloc_x86_64.cc, the engine the object linker shares;
// reloc_aarch64.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "elf_dynamic.h"
#include "elf_memory.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

struct Relocation {
  uint64_t offset = 0;  // r_offset: image vaddr of the place P
  uint32_t type = 0;
  uint32_t sym = 0;
  int64_t addend = 0;
  bool explicit_addend = true;  // RELA; REL reads the addend from the place
};

class RelocContext {
 public:
  RelocContext(MappedImage& image, const std::vector<uint64_t>& symbol_values)
      : image_(image), symbol_values_(symbol_values) {}
  MappedImage& image() { return image_; }
  uint64_t B() const { return image_.bias(); }
  uint64_t P(const Relocation& r) const { return image_.bias() + r.offset; }
  // S: resolved address of the relocation's symbol (0 for symbol index 0).
  uint64_t S(const Relocation& r) const;
  // A: the explicit addend, or (REL) the `Width`-sized value already at P.
  template <typename Width>
  int64_t A(const Relocation& r) const {
    if (r.explicit_addend) return r.addend;
    return static_cast<int64_t>(image_.read<Width>(r.offset, "relocation place"));
  }

 private:
  MappedImage& image_;
  const std::vector<uint64_t>& symbol_values_;
};

// Human-readable "R_X86_64_IRELATIVE (37)" for error messages.
std::string reloc_type_name(uint16_t machine, uint32_t type);
void apply_reloc_x86_64(const Relocation& r, RelocContext& ctx);
void apply_reloc_aarch64(const Relocation& r, RelocContext& ctx);

// Applies DT_RELA, DT_REL, then DT_JMPREL (all eagerly: there is no lazy
// binding, so every PLT slot is final before any code runs).
void apply_relocations(MappedImage& image, const DynamicInfo& dyn, uint16_t machine,
                       const std::vector<uint64_t>& symbol_values);

Error unsupported_reloc(uint16_t machine, uint32_t type);

}  // namespace elf
}  // namespace graphrt
