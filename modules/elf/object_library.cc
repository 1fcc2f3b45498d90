#include "object_library.h"

#include <fstream>

#include "elf_library.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

namespace {

// An export is read whole; this bounds the file.
constexpr size_t kMaxExportBytes = size_t(1) << 30;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(Error::kind_of_errno(errno), "cannot open file").with("file", path);
  const std::streamoff size = in.tellg();
  if (size <= 0 || static_cast<uint64_t>(size) > kMaxExportBytes)
    throw Error("file is empty or larger than " + std::to_string(kMaxExportBytes) + " bytes").with("file", path);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) throw Error("cannot read file").with("file", path);
  return bytes;
}

}  // namespace

size_t ObjectLibrary::symbol_size(const std::string& name) const {
  const std::optional<SymbolInfo> info = linked_->find_symbol(name);
  return info ? static_cast<size_t>(info->size) : 0;
}

std::shared_ptr<Library> load_object_library(const LibrarySource& source) {
  LoadOptions options;
  options.imports = default_import_resolver();
  if (!source.path.empty()) {
    const std::vector<uint8_t> bytes = read_file(source.path);
    return std::make_shared<ObjectLibrary>(link_object_export(bytes.data(), bytes.size(), options, source.path));
  }
  GRAPHRT_CHECK(source.data != nullptr && source.size != 0, "elf-object loader: empty source");
  return std::make_shared<ObjectLibrary>(link_object_export(source.data, source.size, options, "<memory>"));
}

}  // namespace elf
}  // namespace graphrt
