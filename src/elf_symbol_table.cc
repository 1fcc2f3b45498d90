#include "elf_symbol_table.h"

#include <elf.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace graphrt {

namespace {
struct FileBytes {
  const uint8_t* data;
  size_t size;
};

template <typename T>
bool read_at(const FileBytes& file, uint64_t offset, T* out) {
  if (offset > file.size || sizeof(T) > file.size - offset) return false;
  std::memcpy(out, file.data + offset, sizeof(T));
  return true;
}
// The section header at `index`, and the string table it links to.
bool section_with_strings(const FileBytes& file, const Elf64_Ehdr& eh, uint16_t index, Elf64_Shdr* sh,
                          Elf64_Shdr* str) {
  if (!read_at(file, eh.e_shoff + uint64_t(index) * sizeof(Elf64_Shdr), sh)) return false;
  if (!read_at(file, eh.e_shoff + uint64_t(sh->sh_link) * sizeof(Elf64_Shdr), str)) return false;
  return str->sh_offset <= file.size && str->sh_size <= file.size - str->sh_offset;
}

std::string string_at(const FileBytes& file, const Elf64_Shdr& str, uint64_t offset) {
  if (offset >= str.sh_size) return "";
  const char* base = reinterpret_cast<const char*>(file.data + str.sh_offset);
  return std::string(base + offset, strnlen(base + offset, str.sh_size - offset));
}

}  // namespace

ElfImports read_elf_imports(const uint8_t* data, size_t size) {
  ElfImports imports;
  FileBytes file{data, size};
  Elf64_Ehdr eh;
  if (!read_at(file, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr))
    return imports;
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh, str;
    if (!section_with_strings(file, eh, i, &sh, &str)) continue;
    if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize == sizeof(Elf64_Sym)) {
      for (uint64_t k = 1; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
        Elf64_Sym sym;
        if (!read_at(file, sh.sh_offset + k * sizeof(Elf64_Sym), &sym)) break;
        if (sym.st_shndx != SHN_UNDEF || ELF64_ST_BIND(sym.st_info) == STB_WEAK) continue;
        std::string name = string_at(file, str, sym.st_name);
        if (!name.empty()) imports.symbols.push_back(name);
      }
    } else if (sh.sh_type == SHT_DYNAMIC && sh.sh_entsize == sizeof(Elf64_Dyn)) {
      for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Dyn); ++k) {
        Elf64_Dyn dyn;
        if (!read_at(file, sh.sh_offset + k * sizeof(Elf64_Dyn), &dyn) || dyn.d_tag == DT_NULL) break;
        if (dyn.d_tag == DT_NEEDED) imports.needed.push_back(string_at(file, str, dyn.d_un.d_val));
      }
    }
  }
  return imports;
}

namespace {
bool pread_exactly(int fd, uint64_t offset, void* out, size_t n) {
  auto* at = static_cast<uint8_t*>(out);
  while (n > 0) {
    ssize_t got = pread(fd, at, n, static_cast<off_t>(offset));
    if (got <= 0) return false;
    at += got, offset += static_cast<uint64_t>(got), n -= static_cast<size_t>(got);
  }
  return true;
}
}  // namespace

// Copies the ELF header, the section headers and the sections read_elf_imports
// reads (dynamic symbols, dynamic entries, their string tables) into one
// compact image whose headers point at the copies, and parses that.
ElfImports read_elf_imports_from_fd(int fd) {
  constexpr uint64_t kMaxCopied = uint64_t{64} << 20;  // a hostile size must not allocate without bound
  Elf64_Ehdr eh;
  if (!pread_exactly(fd, 0, &eh, sizeof(eh)) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
    return {};
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (!pread_exactly(fd, eh.e_shoff, sections.data(), sections.size() * sizeof(Elf64_Shdr))) return {};
  std::vector<bool> wanted(sections.size(), false);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].sh_type != SHT_DYNSYM && sections[i].sh_type != SHT_DYNAMIC) continue;
    wanted[i] = true;
    if (sections[i].sh_link < sections.size()) wanted[sections[i].sh_link] = true;
  }
  std::vector<uint8_t> image(sizeof(Elf64_Ehdr) + sections.size() * sizeof(Elf64_Shdr));
  for (size_t i = 0; i < sections.size(); ++i) {
    Elf64_Shdr& sh = sections[i];
    if (!wanted[i] || sh.sh_size > kMaxCopied - image.size()) {
      sh.sh_type = SHT_NULL, sh.sh_offset = 0, sh.sh_size = 0;
      continue;
    }
    const size_t at = image.size();
    image.resize(at + sh.sh_size);
    if (!pread_exactly(fd, sh.sh_offset, image.data() + at, sh.sh_size)) return {};
    sh.sh_offset = at;
  }
  eh.e_shoff = sizeof(Elf64_Ehdr);
  std::memcpy(image.data(), &eh, sizeof(eh));
  std::memcpy(image.data() + sizeof(eh), sections.data(), sections.size() * sizeof(Elf64_Shdr));
  return read_elf_imports(image.data(), image.size());
}

ElfSymbolTable read_elf_symbol_table(const uint8_t* data, size_t size) {
  ElfSymbolTable table;
  FileBytes file{data, size};
  Elf64_Ehdr eh;
  if (!read_at(file, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return table;
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return table;
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!read_at(file, eh.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr), &sh) || sh.sh_type != SHT_DYNSYM) continue;
    Elf64_Shdr str;
    if (!read_at(file, eh.e_shoff + uint64_t(sh.sh_link) * sizeof(Elf64_Shdr), &str)) return table;
    if (str.sh_offset > file.size || str.sh_size > file.size - str.sh_offset) return table;
    uint64_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (uint64_t k = 1; k < count; ++k) {
      Elf64_Sym sym;
      if (!read_at(file, sh.sh_offset + k * sizeof(Elf64_Sym), &sym)) break;
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= str.sh_size) continue;
      const char* base = reinterpret_cast<const char*>(file.data + str.sh_offset);
      std::string name(base + sym.st_name, strnlen(base + sym.st_name, str.sh_size - sym.st_name));
      table.sizes[name] = sym.st_size;
      int bind = ELF64_ST_BIND(sym.st_info);
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && (bind == STB_GLOBAL || bind == STB_WEAK) &&
          name.compare(0, 2, "__") != 0 && name.compare(0, 2, "_Z") != 0 && name != "_init" && name != "_fini")
        table.functions.push_back(name);
    }
  }
  return table;
}

}  // namespace graphrt
