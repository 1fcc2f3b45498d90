// ELF shared objects loaded by the base's image loader (src/elf/elf_image.h)
// as a graphrt::Library: the "elf" loader.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/elf/elf_image.h"
#include "graphrt/library.h"
#include "graphrt/runtime.h"

namespace graphrt {
namespace elf {

class ElfLibrary : public graphrt::Library {
 public:
  // Fills the facts from the loaded image: its pages, data symbols and imports.
  explicit ElfLibrary(std::shared_ptr<ElfImage> image);
  void* symbol(const std::string& name) const override { return image_->symbol(name); }
  std::string origin() const override { return image_->origin(); }
  std::vector<std::string> symbol_names() const override { return image_->symbol_names(); }
  const ElfImage& image() const { return *image_; }

 private:
  std::shared_ptr<ElfImage> image_;
};

// Loads a Library from a path or memory source, its imports resolved by
// tvm_import_resolver(&runtime_symbol) (src/elf/elf_imports.h).
std::shared_ptr<Library> load_elf_library(const LibrarySource& source);

}  // namespace elf
}  // namespace graphrt
