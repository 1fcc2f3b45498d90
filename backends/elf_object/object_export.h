// TVM's export files read as relocatable objects: a .tar (gzip-compressed as
// TVM writes it, or plain) of ELF objects, or a single bare object. Members
// that are not objects are refused by name: C/C++ sources would need the
// compiler TVM runs at load time, which is exactly what this avoids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/elf/elf_object.h"
#include "src/elf/elf_types.h"
#include "object_linker.h"

namespace graphrt {
namespace elf {

// True when the first bytes are a gzip stream, a tar archive or an ELF
// relocatable object.
bool is_object_export(const uint8_t* head, size_t size);

// The ELF objects of an export, in archive order. `storage` receives the
// decompressed archive the result points into.
std::vector<ElfObject> read_object_export(const uint8_t* data, size_t size, const std::string& origin,
                                          std::vector<uint8_t>* storage);

// Reads and links an export with `options` (the fuzz target and tests use this
// directly; the loader adds the runtime's import table).
std::unique_ptr<LinkedObjects> link_object_export(const uint8_t* data, size_t size, const LoadOptions& options,
                                                  const std::string& origin);

}  // namespace elf
}  // namespace graphrt
