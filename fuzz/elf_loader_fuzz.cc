// libFuzzer target for the embedded ELF loader (relocate-only: fuzzed code is
// never executed, but every header, table, symbol and relocation path runs).
//
// Build and run: fuzz/README.md (CMake, GRAPHRT_FUZZ=ON) or fuzz/README_elf.md (standalone).
#include <cstddef>
#include <cstdint>
#include <string>

#include "elf_image.h"
#include "elf_imports.h"
#include "graphrt/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphrt::elf::LoadOptions options;
  options.execute = false;  // never run fuzzed code
  options.imports = &graphrt::elf::libc_allowlist_symbol;
  options.max_image_size = uint64_t(64) << 20;  // keep each iteration's mapping small
  try {
    auto image = graphrt::elf::ElfImage::load_memory(data, size, options, "fuzz");
    for (const std::string& name : image->symbol_names()) image->symbol(name);
    image->symbol("iree_hal_executable_library_query");
    image->symbol("__tvm_dev_mblob");
  } catch (const graphrt::Error&) {
    // Expected for malformed input; anything else escapes and is a finding.
  }
  return 0;
}
