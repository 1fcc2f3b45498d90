// Whole-pipeline libFuzzer target: bytes -> ELF image (relocate only, nothing
// from the input ever runs) -> __tvm_dev_mblob -> module tree -> factory
// record -> graph JSON -> params -> executor creation with both memory plans.
// A finding is a crash, a sanitizer report, a leak, or an exception other
// than graphrt::Error. See fuzz/README.md.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "src/elf/elf_image.h"
#include "backends/elf_so/elf_library.h"
#include "src/elf/elf_imports.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphrt::elf::LoadOptions options;
  options.execute = false;
  options.imports = graphrt::elf::tvm_import_resolver(&graphrt::runtime_symbol);
  options.max_image_size = uint64_t(64) << 20;
  try {
    std::shared_ptr<graphrt::elf::ElfImage> image = graphrt::elf::ElfImage::load_memory(data, size, options, "fuzz");
    auto library = std::make_shared<graphrt::elf::ElfLibrary>(std::move(image));
    graphrt::Module root = graphrt::load_module_from_library(graphrt_fuzz::inert_library(library), graphrt_fuzz::stub_load_options());
    graphrt_fuzz::create_executors(root);
  } catch (const graphrt::Error&) {
  }
  return 0;
}
