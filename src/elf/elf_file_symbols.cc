#include "elf_file_symbols.h"

#include <unistd.h>

#include <cstring>
#include <vector>

#include "elf_file.h"

namespace graphrt {
namespace elf {
namespace {

// Calls `visit(section, strings)` for each section of type `type` whose
// entries are `entry_size` bytes and whose linked string table lies inside
// the file; a malformed file visits nothing.
template <typename Visit>
void for_each_section(const uint8_t* data, size_t size, uint32_t type, size_t entry_size, Visit visit) {
  try {
    const ElfFile file(data, size);
    const std::vector<Elf64_Shdr> headers = file.section_headers(false);
    for (const Elf64_Shdr& sh : headers) {
      if (sh.sh_type != type || sh.sh_entsize != entry_size || sh.sh_link >= headers.size()) continue;
      const Elf64_Shdr& strings = headers[sh.sh_link];
      if (!range_in(strings.sh_offset, strings.sh_size, size)) continue;
      visit(file, sh, strings);
    }
  } catch (const Error&) {
    // not an ELF64 file the reader accepts: nothing to list
  }
}

std::string name_at(const ElfFile& file, const Elf64_Shdr& strings, uint64_t offset) {
  std::string name;
  return file.string_at(strings, offset, &name) ? name : std::string();
}

}  // namespace

ElfImports read_elf_imports(const uint8_t* data, size_t size) {
  ElfImports imports;
  for_each_section(data, size, SHT_DYNSYM, sizeof(Elf64_Sym),
                   [&](const ElfFile& file, const Elf64_Shdr& sh, const Elf64_Shdr& strings) {
                     Elf64_Sym sym;
                     for (uint64_t k = 1; file.entry(sh, k, &sym); ++k) {
                       if (sym.st_shndx != SHN_UNDEF || ELF64_ST_BIND(sym.st_info) == STB_WEAK) continue;
                       std::string name = name_at(file, strings, sym.st_name);
                       if (!name.empty()) imports.symbols.push_back(name);
                     }
                   });
  for_each_section(data, size, SHT_DYNAMIC, sizeof(Elf64_Dyn),
                   [&](const ElfFile& file, const Elf64_Shdr& sh, const Elf64_Shdr& strings) {
                     Elf64_Dyn dyn;
                     for (uint64_t k = 0; file.entry(sh, k, &dyn) && dyn.d_tag != DT_NULL; ++k) {
                       if (dyn.d_tag == DT_NEEDED) imports.needed.push_back(name_at(file, strings, dyn.d_un.d_val));
                     }
                   });
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
// compact image whose headers point at the copies, and reads that.
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
  for_each_section(data, size, SHT_DYNSYM, sizeof(Elf64_Sym),
                   [&](const ElfFile& file, const Elf64_Shdr& sh, const Elf64_Shdr& strings) {
                     Elf64_Sym sym;
                     for (uint64_t k = 1; file.entry(sh, k, &sym); ++k) {
                       std::string name;
                       if (sym.st_shndx == SHN_UNDEF || !file.string_at(strings, sym.st_name, &name)) continue;
                       table.sizes[name] = sym.st_size;
                       const int bind = ELF64_ST_BIND(sym.st_info);
                       // TVM v0.22+ exports each function as __tvm_ffi_<name> (its data as __tvm_ffi__*).
                       const bool ffi_function = name.compare(0, 10, "__tvm_ffi_") == 0 && name.compare(0, 11, "__tvm_ffi__") != 0;
                       if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && (bind == STB_GLOBAL || bind == STB_WEAK) &&
                           (ffi_function || name.compare(0, 2, "__") != 0) && name.compare(0, 2, "_Z") != 0 &&
                           name != "_init" && name != "_fini")
                         table.functions.push_back(name);
                     }
                   });
  return table;
}

}  // namespace elf
}  // namespace graphrt
