// PT_DYNAMIC parsing and the dynamic symbol table (with SysV and GNU hash
// lookup). Reads the *loaded* image through MappedImage, so every table
// address the file names is bounds-checked against the mapped range.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "elf_memory.h"

namespace graphrt {
namespace elf {

// A table given by address + byte size (e.g. DT_RELA + DT_RELASZ).
struct TableRef {
  uint64_t vaddr = 0;
  uint64_t size = 0;
  bool present = false;
};

struct DynamicInfo {
  std::optional<uint64_t> symtab, strtab, strsz, syment, hash, gnu_hash;
  TableRef rela, rel, jmprel;
  std::optional<uint64_t> relaent, relent, pltrel;
  std::optional<uint64_t> init, fini;
  TableRef init_array, fini_array;
  std::vector<uint64_t> needed;  // DT_NEEDED string offsets (informational)
};

// Reads the dynamic table at `dynamic` (stops at DT_NULL or the segment end).
DynamicInfo parse_dynamic(const MappedImage& image, const Segment& dynamic);

class SymbolTable {
 public:
  SymbolTable(const MappedImage& image, const DynamicInfo& dyn);

  size_t count() const { return count_; }
  Elf64_Sym symbol(size_t index) const;
  // NUL-terminated name inside DT_STRTAB; throws when it runs off the table.
  std::string name(const Elf64_Sym& sym) const;
  std::string string_at(uint64_t offset) const;
  // Index of the defined GLOBAL/WEAK symbol `name`, via GNU hash, else SysV
  // hash, else a linear scan.
  std::optional<size_t> find_defined(const std::string& name) const;
  static bool is_exported(const Elf64_Sym& sym);

 private:
  size_t count_from_sysv() const;
  size_t count_from_gnu() const;
  std::optional<size_t> find_gnu(const std::string& name) const;
  std::optional<size_t> find_sysv(const std::string& name) const;
  std::optional<size_t> find_linear(const std::string& name) const;
  bool matches(size_t index, const std::string& name) const;

  const MappedImage& image_;
  uint64_t symtab_ = 0;
  uint64_t strtab_ = 0;
  uint64_t strsz_ = 0;
  std::optional<uint64_t> hash_, gnu_hash_;
  size_t count_ = 0;
};

}  // namespace elf
}  // namespace graphrt
