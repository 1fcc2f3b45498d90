// What the section headers of an ELF64 shared object file say about its
// dynamic symbols: its exported function names and symbol sizes (.dynsym),
// for listings of dlopen'd libraries, and its imports, to explain a failed
// load. Read through ElfFile (elf_file.h); a malformed file, or a malformed
// section, gives an empty answer rather than an error: these are hints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace graphrt {
namespace elf {

struct ElfSymbolTable {
  std::vector<std::string> functions;  // defined global/weak STT_FUNC symbols
  std::map<std::string, uint64_t> sizes;  // every defined symbol's st_size
};

ElfSymbolTable read_elf_symbol_table(const uint8_t* data, size_t size);

// What a shared object needs from others: its strong undefined dynamic
// symbols (weak ones may stay unresolved) and its DT_NEEDED libraries.
struct ElfImports {
  std::vector<std::string> symbols;
  std::vector<std::string> needed;
};

ElfImports read_elf_imports(const uint8_t* data, size_t size);
// The same from an open file, reading only its headers and the sections the
// answer needs (a few kilobytes): nothing of the file is mapped, so asking
// about a loaded library adds nothing to the process's resident memory.
ElfImports read_elf_imports_from_fd(int fd);

}  // namespace elf
}  // namespace graphrt
