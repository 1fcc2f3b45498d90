// Import handling: the libc/libm allow-list and the resolution of a loaded
// image's undefined symbols against a caller-supplied ImportResolver.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "elf_dynamic.h"
#include "elf_types.h"

namespace graphrt {
namespace elf {

// Address of an allow-listed C library function (memcpy, expf, ...), or
// nullptr. This is the whole of libc an embedded image may call; anything else
// must come from the runtime's own symbols (graphrt::runtime_symbol: the TVM
// C ABI and the float16/bfloat16 conversion helpers).
void* libc_allowlist_symbol(const std::string& name);
std::vector<std::string> libc_allowlist_names();

// The import table of TVM-exported images: `runtime_symbol` (the runtime's
// TVM C-ABI entry points, graphrt::runtime_symbol, handed in by the back end:
// the base knows no runtime) first, then the libc/libm allow-list and, for C++
// code, the libstdc++ one (elf_cxx_imports.h).
ImportResolver tvm_import_resolver(void* (*runtime_symbol)(const std::string& name));

// S for every dynamic symbol index: bias + st_value for defined symbols,
// st_value for SHN_ABS, the resolver's answer for undefined ones (0 for an
// unresolved weak). Throws naming every unresolved strong symbol.
std::vector<uint64_t> resolve_symbols(const SymbolTable& symbols, uint64_t bias, const ImportResolver& imports);

// Names of the undefined (imported) symbols, in dynsym order.
std::vector<std::string> imported_names(const SymbolTable& symbols);

}  // namespace elf
}  // namespace graphrt
