// ELF64 header and program-header validation against the raw file bytes.
// Everything here works on an untrusted buffer: every offset and size is
// checked before use, and nothing is mapped yet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "elf_file.h"
#include "elf_types.h"

namespace graphrt {
namespace elf {

// One program header, reduced to what the loader uses.
struct Segment {
  uint32_t type = 0;
  uint32_t flags = 0;  // PF_R / PF_W / PF_X
  uint64_t offset = 0;
  uint64_t vaddr = 0;
  uint64_t filesz = 0;
  uint64_t memsz = 0;
};

struct ParsedElf {
  uint16_t machine = 0;
  std::vector<Segment> loads;  // PT_LOAD, sorted by vaddr, non-overlapping
  Segment dynamic;             // the first PT_DYNAMIC
  std::vector<Segment> relro;  // PT_GNU_RELRO
  uint64_t vaddr_min = 0;      // page-aligned start of the image's range
  uint64_t vaddr_max = 0;      // page-aligned end
};

size_t host_page_size();
uint16_t host_machine();

// Validates the ELF header and program headers of `data` and returns the
// layout. Throws graphrt::Error (with "offset" context where it applies).
ParsedElf parse_elf(const uint8_t* data, size_t size, const LoadOptions& options);

}  // namespace elf
}  // namespace graphrt
