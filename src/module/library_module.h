// The "library" module: functions are exported symbols of a loaded image.
#pragma once

#include <memory>
#include <vector>

#include "graphrt/library.h"
#include "graphrt/module.h"
#include "threading/parallel_split.h"

namespace graphrt {

class LibraryModuleNode : public ModuleNode {
 public:
  // A library of TVM v0.22+ (tvm-ffi) is told by its symbols; its functions are
  // then its `__tvm_ffi_<name>` exports, called through the tvm-ffi adapter.
  explicit LibraryModuleNode(std::shared_ptr<Library> library);
  ~LibraryModuleNode() override;
  std::string type_key() const override { return "library"; }
  PackedFunc find_function(const std::string& name, const Module& self) override;
  std::vector<std::string> function_names() const override;
  const std::shared_ptr<Library>& library() const { return library_; }
  // Lets the thread pool split the parallel work of this library's kernels
  // (parallel_split.h) for as long as this module lives. For TVM-made code only.
  void allow_split_launches();

 private:
  std::shared_ptr<Library> library_;
  bool speaks_ffi_;
  bool split_launches_allowed_ = false;
};

// The code of `library` whose parallel launches may be split (parallel_split.h):
// its code runs, or none when its code may call TVMBackendParallelBarrier.
std::vector<CodeRange> split_launch_code(const Library& library);

// Called by ~ModuleNode for a shared root: drops `root` from the table of
// live trees if it is still the one registered under `image_key`.
void forget_shared_tree(const void* image_key, ModuleNode* root);

// Parses a packed-module blob (u64 size, u64 record count, records, `_import_tree`) whose "_lib" record is `lib_module`,
// its records read by `runtime`'s loaders (the runtime the library is loaded through); returns the root.
// `ctx_out` receives the module generated code must see.
// `pages_releasable`: the blob lies in a read-only file mapping whose pages
// may be dropped once decoded (see BlobReader::set_pages_releasable).
// The overload without a runtime uses the default one.
Module parse_module_blob(const Runtime& runtime, const uint8_t* data, size_t size, const std::string& origin,
                         const Module& lib_module, Module* ctx_out, bool pages_releasable = false);
Module parse_module_blob(const uint8_t* data, size_t size, const std::string& origin, const Module& lib_module,
                         Module* ctx_out, bool pages_releasable = false);

}  // namespace graphrt
