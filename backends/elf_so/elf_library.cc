#include "elf_library.h"

#include <elf.h>

#include "graphrt/error.h"
#include "src/elf/elf_imports.h"

namespace graphrt {
namespace elf {

ElfLibrary::ElfLibrary(std::shared_ptr<ElfImage> image) : image_(std::move(image)) {
  facts_.ranges = library_ranges(image_->page_runs());
  for (const auto& [name, info] : image_->data_symbols()) {
    const bool data = info.type == STT_OBJECT || info.type == STT_TLS || info.type == STT_COMMON;
    facts_.symbols.emplace(name, LibrarySymbol{static_cast<size_t>(info.size), !data});
  }
  facts_.imports = image_->imports();
}

std::shared_ptr<Library> load_elf_library(const LibrarySource& source) {
  LoadOptions options;
  options.imports = tvm_import_resolver(&graphrt::runtime_symbol);
  std::shared_ptr<ElfImage> image;
  if (!source.path.empty()) {
    image = ElfImage::load_file(source.path, options);
  } else {
    GRAPHRT_CHECK(source.data != nullptr && source.size != 0, "elf loader: empty library source");
    image = ElfImage::load_memory(source.data, source.size, options);
  }
  return std::make_shared<ElfLibrary>(std::move(image));
}

}  // namespace elf
}  // namespace graphrt
