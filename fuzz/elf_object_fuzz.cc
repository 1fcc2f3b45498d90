// libFuzzer target for TVM .tar exports and ELF relocatable objects: gzip,
// the tar reader, ET_REL parsing, symbol resolution, layout, GOT/stub
// building and every relocation. Relocate-only: fuzzed code never runs.
//
// Build and run: see fuzz/README_elf.md ("Relocatable objects and .tar").
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/elf/elf_imports.h"
#include "graphrt/error.h"
#include "backends/elf_object/object_export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphrt::elf::LoadOptions options;
  options.execute = false;  // never run fuzzed code
  options.imports = &graphrt::elf::libc_allowlist_symbol;
  options.max_image_size = uint64_t(64) << 20;  // keep each iteration's mapping small
  try {
    auto linked = graphrt::elf::link_object_export(data, size, options, "fuzz");
    for (const std::string& name : linked->symbol_names()) linked->symbol(name);
    linked->symbol("__tvm_dev_mblob");
  } catch (const graphrt::Error&) {
    // Expected for malformed input; anything else escapes and is a finding.
  }
  return 0;
}
