#include "object_library.h"

#include <elf.h>

#include "graphrt/error.h"
#include "graphrt/regular_file.h"
#include "src/elf/elf_imports.h"
#include "tvmc_package.h"

namespace graphrt {
namespace elf {

namespace {

// An export is read whole; this bounds the file.
constexpr size_t kMaxExportBytes = size_t(1) << 30;

std::string read_export(const std::string& path) {
  std::string bytes = read_regular_file(path, "object export", kMaxExportBytes);
  if (bytes.empty()) throw Error("object export is empty").with("file", path);
  return bytes;
}

}  // namespace

ObjectLibrary::ObjectLibrary(std::unique_ptr<LinkedObjects> linked) : linked_(std::move(linked)) {
  // Neither code ranges nor imports are reported, and every symbol counts as
  // callable: the kernels of linked objects get one task per thread, and the
  // module system trusts them by their TVM symbols alone.
  facts_.ranges = library_ranges(linked_->page_runs());
  for (LibraryRange& r : facts_.ranges) r.code = false;
  for (const auto& [name, info] : linked_->exports())
    if (info.type != STT_FUNC) facts_.symbols.emplace(name, LibrarySymbol{static_cast<size_t>(info.size), true});
}

std::shared_ptr<Library> load_object_library(const LibrarySource& source) {
  LoadOptions options;
  options.imports = tvm_import_resolver(&graphrt::runtime_symbol);
  if (!source.path.empty()) {
    std::string bytes = read_export(source.path);
    // A tvmc package is a tar too; its members are a library, a graph and params, not objects.
    if (is_tvmc_package(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()))
      return load_tvmc_package(std::move(bytes), source.path);
    return std::make_shared<ObjectLibrary>(link_object_export(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                              bytes.size(), options, source.path));
  }
  GRAPHRT_CHECK(source.data != nullptr && source.size != 0, "elf-object loader: empty source");
  if (is_tvmc_package(source.data, source.size))
    return load_tvmc_package(std::string(reinterpret_cast<const char*>(source.data), source.size), "<memory>");
  return std::make_shared<ObjectLibrary>(link_object_export(source.data, source.size, options, "<memory>"));
}

}  // namespace elf
}  // namespace graphrt
