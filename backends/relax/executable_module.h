// The module a Relax executable record loads as (TVM's VMExecutable): the
// root of its library's tree, importing the kernels. It links the executable
// against its imports once the tree is built, so that a missing kernel or
// builtin fails the load; `vm_load_executable` then makes VM modules.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"
#include "graphrt/params_cache.h"
#include "backends/relax/executable.h"
#include "backends/relax/linked_executable.h"

namespace graphrt {
namespace relax {

// `runtime`: the one whose record loader read the executable (the runtime the
// library was loaded through), which outlives it: linking finds the functions
// its imports lack there, and its VMs use that runtime's devices.
class ExecutableModuleNode : public ModuleNode {
 public:
  ExecutableModuleNode(std::shared_ptr<const Executable> exe, const Runtime& runtime)
      : exe_(std::move(exe)), runtime_(&runtime) {}
  std::string type_key() const override { return exe_->type_key; }
  PackedFunc find_function(const std::string& name, const Module& self) override;
  std::vector<std::string> function_names() const override;
  void attach_environment(ModuleNode* context) override;

  const Executable& executable() const { return *snapshot(); }
  // The executable linked against this module's imports and its runtime's functions (linked on first use).
  std::shared_ptr<const LinkedExecutable> linked();

  // The executable's tensor constants, each named "c[<pool index>]": what a params cache holds.
  // Shapes, strings and numbers in the pool are not among them (they stay in the executable).
  ParamList tensor_constants() const;
  // Makes each array of `arrays` the tensor constant it names (same dtype and shape, on the
  // CPU, contiguous, 64-byte aligned; it may be read-only memory: neither the VM nor TVM's
  // generated code writes into a constant). VMs made from now on use them; a VM made before
  // keeps the constants it started with, so the arrays replaced are freed once no such VM is
  // left (replace before making VMs, as the server does, and they go at once).
  void replace_constants(const ParamList& arrays);
  // The tensor constants mapped from the params cache at `cache_path` made for `model_path`
  // (graphrt/params_cache.h), which replace the decoded ones: the processes serving one model
  // share one copy of its weights. A cache missing, stale, damaged or holding other bytes than
  // these constants is written anew from them.
  ParamsCacheUse use_params_cache(const std::string& cache_path, const std::string& model_path);

 private:
  std::shared_ptr<const Executable> snapshot() const;
  std::shared_ptr<const LinkedExecutable> link_locked();

  mutable std::mutex mutex_;  // guards exe_ and linked_
  std::shared_ptr<const Executable> exe_;
  std::shared_ptr<const LinkedExecutable> linked_;
  const Runtime* runtime_;
};

// Reads and verifies a record's executable (the loadbinary handler's work, in
// `runtime`). `module_bytes`: the reader holds exactly the executable (a v0.22+
// blob's module bytes), not the older record's length-prefixed string.
Module load_executable_module(BlobReader& reader, const std::string& type_key, bool module_bytes,
                              const Runtime& runtime);

}  // namespace relax
}  // namespace graphrt
