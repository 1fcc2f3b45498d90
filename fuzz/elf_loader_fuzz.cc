// libFuzzer target for the embedded ELF loader (relocate-only: fuzzed code is
// never executed, but every header, table, symbol and relocation path runs).
//
// Build (from the repository root; see fuzz/README_elf.md):
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined \
//     -Iinclude -Imodules/elf \
//     modules/elf/elf_parse.cc modules/elf/elf_memory.cc modules/elf/elf_dynamic.cc \
//     modules/elf/elf_reloc.cc modules/elf/reloc_x86_64.cc modules/elf/reloc_aarch64.cc \
//     modules/elf/elf_imports.cc modules/elf/elf_image.cc src/error.cc \
//     fuzz/elf_loader_fuzz.cc -o /tmp/elf_loader_fuzz
// Run:
//   mkdir -p /tmp/elf_corpus && cp ../shared/fixtures/iree/*.so ../shared/fixtures/mlp/deploy_lib.so /tmp/elf_corpus/
//   /tmp/elf_loader_fuzz -max_total_time=60 -rss_limit_mb=4096 /tmp/elf_corpus
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
