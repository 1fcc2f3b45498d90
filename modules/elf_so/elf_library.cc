#include "elf_library.h"

#include "graphrt/error.h"
#include "src/elf/elf_imports.h"

namespace graphrt {
namespace elf {

size_t ElfLibrary::symbol_size(const std::string& name) const {
  const std::optional<SymbolInfo> info = image_->find_symbol(name);
  return info ? static_cast<size_t>(info->size) : 0;
}

bool ElfLibrary::is_function(const std::string& name) const {
  const std::optional<SymbolInfo> info = image_->find_symbol(name);
  return !info || (info->type != STT_OBJECT && info->type != STT_TLS && info->type != STT_COMMON);
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
