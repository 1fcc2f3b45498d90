// Shared types of the embedded ELF loader: load options, the import resolver
// and small helpers for formatting error context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace graphrt {
namespace elf {

// Resolves one undefined dynamic symbol of an image to a host address, or
// returns nullptr when the name is not allowed. The loader never consults the
// process's own symbol table: everything an image may call goes through this.
using ImportResolver = std::function<void*(const std::string& name)>;

struct LoadOptions {
  // Import table; empty means "no imports at all" (weak undefined symbols
  // still resolve to 0, as the ELF spec allows).
  ImportResolver imports;
  // false = relocate only: the image is mapped, relocated and protected, but
  // no page is made executable and no initializer runs. This is the mode for
  // foreign-architecture images (aarch64 on an x86_64 host) and for fuzzing.
  bool execute = true;
  // Upper bound on the reserved address range; protects against images that
  // claim terabyte-sized segments.
  uint64_t max_image_size = uint64_t(1) << 30;
};

// A run of a loaded image's pages that share one protection (PROT_*).
struct PageRun {
  const uint8_t* start = nullptr;
  size_t bytes = 0;
  int prot = 0;
};

}  // namespace elf
}  // namespace graphrt
