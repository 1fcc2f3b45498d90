// ElfFile — the one reader of ELF64 files in graphrt: the embedded loader's
// shared objects (elf_parse.h), the object linker's relocatable objects
// (elf_object.h) and the listings of libraries the dlopen loader opened
// (elf_file_symbols.h) all read their bytes through it.
//
// The bytes are untrusted: every offset, count and size read from them is
// checked against the buffer before anything is read or reserved, with
// overflow-safe arithmetic, and a table entry is copied out (memcpy: the
// buffer may be unaligned), never referenced in place.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graphrt/error.h"

namespace graphrt {
namespace elf {

// [offset, offset + length) lies inside `total` bytes, without wrapping.
bool range_in(uint64_t offset, uint64_t length, uint64_t total);

// "0x1a2b" formatting for the "offset"/"vaddr" error context.
std::string hex(uint64_t value);

class ElfFile {
 public:
  // Checks the identification: the magic, ELF64, little-endian, the current
  // version. Throws Error ("invalid ELF: ...", with the offset at fault).
  // `data` must outlive the reader.
  ElfFile(const uint8_t* data, size_t size);

  // True when `data` starts with the ELF magic and names type `e_type`;
  // reads nothing past the header and never throws.
  static bool has_type(const uint8_t* data, size_t size, uint16_t e_type);

  const Elf64_Ehdr& header() const { return header_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  // Copies a T from `offset`; false when it does not lie inside the file.
  template <typename T>
  bool read(uint64_t offset, T* out) const;

  // The program header table (checks e_ehsize, e_phentsize, e_phnum and that
  // the table lies inside the file). Throws.
  std::vector<Elf64_Phdr> program_headers() const;
  // Offset of program header `index` in the file (for error context).
  uint64_t program_header_offset(size_t index) const;

  // The section header table (checks e_shentsize, e_shnum without extended
  // numbering and that the table lies inside the file). Throws "invalid ELF:
  // ..." unless the table is empty and `required` is false.
  std::vector<Elf64_Shdr> section_headers(bool required = true) const;
  // True when the section's bytes lie inside the file (SHT_NOBITS and
  // SHT_NULL occupy none, so they always do).
  bool section_in_file(const Elf64_Shdr& section) const;
  // Entry `index` of a table section with entries of type T; false when it
  // lies outside the section or the file.
  template <typename T>
  bool entry(const Elf64_Shdr& section, uint64_t index, T* out) const;
  // The NUL-terminated string at `offset` of string table `table`; false when
  // the offset lies outside the table or the string runs off its end.
  bool string_at(const Elf64_Shdr& table, uint64_t offset, std::string* out) const;

 private:
  const uint8_t* data_;
  size_t size_;
  Elf64_Ehdr header_;
};

template <typename T>
bool ElfFile::read(uint64_t offset, T* out) const {
  if (!range_in(offset, sizeof(T), size_)) return false;
  std::memcpy(static_cast<void*>(out), data_ + offset, sizeof(T));
  return true;
}

template <typename T>
bool ElfFile::entry(const Elf64_Shdr& section, uint64_t index, T* out) const {
  uint64_t at;
  if (index >= section.sh_size / sizeof(T) || __builtin_add_overflow(section.sh_offset, index * sizeof(T), &at))
    return false;
  return read(at, out);
}

// Error("invalid ELF: <what>") with the file offset at fault as context.
Error elf_error(const std::string& what, uint64_t offset);

}  // namespace elf
}  // namespace graphrt
