// libFuzzer target for the ELF reader (src/elf/elf_file.h) and the embedded
// loader built on it (relocate-only: fuzzed code is never executed, but every
// header, table, symbol and relocation path runs), and for the listings the
// dlopen loader reads from a library file's section headers.
//
// Build and run: fuzz/README.md (CMake, GRAPHRT_FUZZ=ON) or fuzz/README_elf.md (standalone).
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/elf/elf_file_symbols.h"
#include "src/elf/elf_image.h"
#include "src/elf/elf_imports.h"
#include "graphrt/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The section-header listings never throw: a malformed file lists nothing.
  graphrt::elf::read_elf_symbol_table(data, size);
  graphrt::elf::read_elf_imports(data, size);
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
