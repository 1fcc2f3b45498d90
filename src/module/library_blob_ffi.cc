// The blob of a TVM v0.22+ library (`__tvm_ffi__library_bin`, tvm-ffi's
// library format): u64 size, the import tree first (row pointers, children),
// then per module in tree order its kind and, unless the kind is `_lib` (the
// library itself), its bytes.
#include "module/library_blob_ffi.h"

#include "graphrt/binary_loader.h"
#include "graphrt/runtime.h"
#include "module/import_tree.h"

namespace graphrt {

Module parse_ffi_module_blob(const uint8_t* data, size_t size, const std::string& origin, const Module& lib_module,
                             Module* ctx_out, bool pages_releasable) {
  return parse_ffi_module_blob(runtime(), data, size, origin, lib_module, ctx_out, pages_releasable);
}

Module parse_ffi_module_blob(const Runtime& runtime, const uint8_t* data, size_t size, const std::string& origin,
                             const Module& lib_module, Module* ctx_out, bool pages_releasable) {
  BlobReader outer(data, size, origin);
  const uint64_t nbytes = outer.read_u64("blob size prefix");
  if (nbytes > outer.remaining())
    throw outer.error("blob size prefix says " + std::to_string(nbytes) + " bytes but only " +
                      std::to_string(outer.remaining()) + " follow");
  BlobReader reader(data + 8, nbytes, origin);
  reader.set_pages_releasable(pages_releasable);
  const std::vector<uint64_t> row_ptr = reader.read_u64_vector("import tree row pointers");
  const std::vector<uint64_t> children = reader.read_u64_vector("import tree children");
  if (row_ptr.empty()) throw reader.error("the import tree has no row pointers").with("field", "import tree");
  const size_t count = row_ptr.size() - 1;
  if (count == 0) throw reader.error("the blob holds no module").with("field", "import tree");
  std::vector<Module> modules;
  bool has_lib = false;
  for (size_t i = 0; i < count; ++i) {
    const std::string kind = reader.read_string("module kind");
    if (kind == "_lib") {
      if (has_lib) throw reader.error("blob has two _lib modules").with("module", std::to_string(i));
      has_lib = true;
      modules.push_back(lib_module);
      continue;
    }
    const uint64_t n = reader.read_count("module bytes length", 1);
    BlobReader bytes(reader.take(n, "module bytes"), n, origin);
    try {
      modules.push_back(load_module_bytes(runtime, kind, bytes));
    } catch (Error& e) {
      throw e.with("module", std::to_string(i));
    }
  }
  if (!reader.at_end())
    throw reader.error(std::to_string(reader.remaining()) + " unparsed bytes after the last module");
  reader.release_consumed();
  attach_imports(reader, modules, row_ptr, children);
  *ctx_out = has_lib ? lib_module : modules[0];
  return modules[0];
}

}  // namespace graphrt
