#include "elf_file.h"

#include <cstdio>

namespace graphrt {
namespace elf {

bool range_in(uint64_t offset, uint64_t length, uint64_t total) {
  uint64_t end;
  return !__builtin_add_overflow(offset, length, &end) && end <= total;
}

std::string hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

Error elf_error(const std::string& what, uint64_t offset) {
  Error e("invalid ELF: " + what);
  e.with("offset", hex(offset));
  return e;
}

ElfFile::ElfFile(const uint8_t* data, size_t size) : data_(data), size_(size) {
  if (data == nullptr || size < sizeof(Elf64_Ehdr)) throw elf_error("file too small for an ELF header", 0);
  std::memcpy(&header_, data, sizeof(header_));
  if (std::memcmp(header_.e_ident, ELFMAG, SELFMAG) != 0) throw elf_error("bad magic", 0);
  if (header_.e_ident[EI_CLASS] != ELFCLASS64) throw elf_error("not ELF64", EI_CLASS);
  if (header_.e_ident[EI_DATA] != ELFDATA2LSB) throw elf_error("not little-endian", EI_DATA);
  if (header_.e_ident[EI_VERSION] != EV_CURRENT || header_.e_version != EV_CURRENT)
    throw elf_error("unknown ELF version", EI_VERSION);
}

bool ElfFile::has_type(const uint8_t* data, size_t size, uint16_t e_type) {
  if (data == nullptr || size < sizeof(Elf64_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0) return false;
  uint16_t type;
  std::memcpy(&type, data + offsetof(Elf64_Ehdr, e_type), sizeof(type));
  return type == e_type;
}

uint64_t ElfFile::program_header_offset(size_t index) const {
  return header_.e_phoff + uint64_t(index) * sizeof(Elf64_Phdr);
}

std::vector<Elf64_Phdr> ElfFile::program_headers() const {
  const Elf64_Ehdr& eh = header_;
  if (eh.e_ehsize != sizeof(Elf64_Ehdr)) throw elf_error("bad e_ehsize", offsetof(Elf64_Ehdr, e_ehsize));
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) throw elf_error("bad e_phentsize", offsetof(Elf64_Ehdr, e_phentsize));
  if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM) throw elf_error("bad e_phnum", offsetof(Elf64_Ehdr, e_phnum));
  if (eh.e_phoff == 0 || !range_in(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr), size_))
    throw elf_error("program header table outside the file", offsetof(Elf64_Ehdr, e_phoff));
  std::vector<Elf64_Phdr> headers(eh.e_phnum);
  std::memcpy(static_cast<void*>(headers.data()), data_ + eh.e_phoff, headers.size() * sizeof(Elf64_Phdr));
  return headers;
}

std::vector<Elf64_Shdr> ElfFile::section_headers(bool required) const {
  const Elf64_Ehdr& eh = header_;
  if (!required && eh.e_shnum == 0) return {};
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) throw elf_error("bad e_shentsize", offsetof(Elf64_Ehdr, e_shentsize));
  if (eh.e_shnum == 0 || eh.e_shnum >= SHN_LORESERVE)
    throw elf_error("bad e_shnum (extended numbering is not supported)", offsetof(Elf64_Ehdr, e_shnum));
  if (!range_in(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr), size_))
    throw elf_error("section header table outside the file", offsetof(Elf64_Ehdr, e_shoff));
  std::vector<Elf64_Shdr> headers(eh.e_shnum);
  std::memcpy(static_cast<void*>(headers.data()), data_ + eh.e_shoff, headers.size() * sizeof(Elf64_Shdr));
  return headers;
}

bool ElfFile::section_in_file(const Elf64_Shdr& section) const {
  return section.sh_type == SHT_NOBITS || section.sh_type == SHT_NULL ||
         range_in(section.sh_offset, section.sh_size, size_);
}

bool ElfFile::string_at(const Elf64_Shdr& table, uint64_t offset, std::string* out) const {
  if (!range_in(table.sh_offset, table.sh_size, size_) || offset >= table.sh_size) return false;
  const char* p = reinterpret_cast<const char*>(data_ + table.sh_offset + offset);
  const size_t n = strnlen(p, table.sh_size - offset);
  if (n == table.sh_size - offset) return false;
  out->assign(p, n);
  return true;
}

}  // namespace elf
}  // namespace graphrt
