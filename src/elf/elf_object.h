// One ELF64 relocatable object (ET_REL, a ".o") parsed from an untrusted
// buffer: section headers, the symbol table and the RELA tables of allocated
// sections, every offset and index checked. Nothing is mapped here; the
// linker (object_linker.h) lays several objects out into one image.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "elf_reloc.h"

namespace graphrt {
namespace elf {

struct ObjectSection {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t align = 1;
  uint32_t link = 0;
  uint32_t info = 0;
};

struct ObjectSymbol {
  std::string name;
  uint8_t bind = 0;
  uint8_t type = 0;
  uint8_t visibility = 0;
  uint16_t shndx = 0;
  uint64_t value = 0;
  uint64_t size = 0;
};

// The relocations that patch one allocated section.
struct ObjectRelocations {
  uint32_t section = 0;  // index of the patched section
  std::vector<Relocation> entries;
};

// A COMDAT group: the sections that go or stay together under one signature.
struct ObjectGroup {
  std::string signature;
  std::vector<uint32_t> sections;
};

struct ElfObject {
  std::string name;  // member name, for errors
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint16_t machine = 0;
  std::vector<ObjectSection> sections;  // by section index
  std::vector<ObjectSymbol> symbols;    // by symbol index (0 = the null symbol)
  std::vector<ObjectRelocations> relocations;
  std::vector<ObjectGroup> groups;
};

// True when `data` is an ELF file of type ET_REL.
bool is_elf_object(const uint8_t* data, size_t size);

// Validates and decodes the object; `data` must outlive the result. Throws
// graphrt::Error naming the member (and section or symbol) at fault.
ElfObject parse_object(const uint8_t* data, size_t size, const std::string& name);

}  // namespace elf
}  // namespace graphrt
