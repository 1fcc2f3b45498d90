#include "object_export.h"

#include "graphrt/error.h"
#include "gzip_stream.h"
#include "tar_archive.h"

namespace graphrt {
namespace elf {

namespace {

// What a compressed export may inflate to: well under the memory a load may
// take, since a 1 MB member can declare (and hold) a thousand times that.
constexpr size_t kMaxInflatedBytes = size_t(256) << 20;

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_source_name(const std::string& name) {
  for (const char* ext : {".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hpp", ".s", ".S", ".ll"}) {
    if (has_suffix(name, ext)) return true;
  }
  return false;
}

ElfObject member_object(const TarMember& m) {
  if (is_source_name(m.name))
    throw Error("member '" + m.name +
                "' is source code that TVM compiles with a C/C++ compiler at load time; graphrt links objects only "
                "(export this model as a .so, or with an LLVM target)")
        .with("member", m.name);
  if (!is_elf_object(m.data, m.size))
    throw Error("unknown member '" + m.name + "' in the export (expected ELF relocatable objects, .o)").with("member", m.name);
  return parse_object(m.data, m.size, m.name);
}

}  // namespace

bool is_object_export(const uint8_t* head, size_t size) {
  return is_gzip(head, size) || is_tar(head, size) || is_elf_object(head, size);
}

std::vector<ElfObject> read_object_export(const uint8_t* data, size_t size, const std::string& origin,
                                          std::vector<uint8_t>* storage) {
  std::vector<ElfObject> objects;
  try {
    if (is_elf_object(data, size)) {
      objects.push_back(parse_object(data, size, origin));
      return objects;
    }
    if (is_gzip(data, size)) {
      *storage = gunzip(data, size, kMaxInflatedBytes, origin);
      data = storage->data();
      size = storage->size();
    }
    if (!is_tar(data, size)) throw Error("not a TVM export: neither a tar archive nor an ELF relocatable object");
    for (const TarMember& m : read_tar(data, size, origin)) objects.push_back(member_object(m));
    if (objects.empty()) throw Error("the archive holds no object files");
  } catch (Error& e) {
    if (e.context_value("file").empty()) e.with("file", origin);
    throw;
  }
  return objects;
}

std::unique_ptr<LinkedObjects> link_object_export(const uint8_t* data, size_t size, const LoadOptions& options,
                                                  const std::string& origin) {
  std::vector<uint8_t> storage;
  const std::vector<ElfObject> objects = read_object_export(data, size, origin, &storage);
  return LinkedObjects::link(objects, options, origin);
}

}  // namespace elf
}  // namespace graphrt
