// Modules: TVM's unit of loaded code, arranged in an import tree.
#pragma once

#include "graphrt/export.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/library.h"
#include "graphrt/object.h"
#include "graphrt/packed_func.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

class ModuleNode : public Object {
 public:
  ~ModuleNode() override;
  virtual std::string type_key() const = 0;
  const char* object_type_key() const override { return "runtime.Module"; }
  // The module's own function `name`, or null. `self` is a reference to this
  // module, for functions that must keep it alive.
  virtual PackedFunc find_function(const std::string& name, const Module& self) = 0;
  // Names this module can answer (for listings and "did you mean" hints).
  virtual std::vector<std::string> function_names() const { return {}; }

  // TVM's GetFunction(name, query_imports): self first, then imports depth-first.
  PackedFunc get_function(const std::string& name, bool query_imports = false);
  // Like get_function(name, true) but throws an Error naming the function,
  // the module and close matches when it is missing.
  PackedFunc require_function(const std::string& name);
  // TVMBackendGetFuncFromEnv: imports only (recursive), memoised, then the
  // global registry. Handles stay valid for the module's lifetime.
  FunctionNode* get_func_from_env(const std::string& name);

  // Called once after a library's module tree is built, with the module that
  // generated code sees as its context (the "_lib" module). Modules that call
  // back into the tree by name (the VM's kernel calls) keep this pointer; it
  // is not a reference because the context owns them through its imports.
  virtual void attach_environment(ModuleNode* context) { (void)context; }

  const std::vector<Module>& imports() const { return imports_; }
  void add_import(const Module& m);

  // Set on the root of a tree that loads of the same image share
  // (library_module.cc); the destructor takes the tree out of that table.
  const void* shared_image_key = nullptr;

 private:
  std::vector<Module> imports_;
  std::mutex env_cache_mutex_;
  std::map<std::string, PackedFunc> env_cache_;
};

// Loading options; "dlopen" is the default loader, "elf" the embedded one.
struct LoadOptions {
  std::string loader = "dlopen";
  // A library with neither a TVM blob (__tvm_dev_mblob) nor any TVM-ABI
  // symbol (__tvm_module_ctx, __TVMAPISetLastError, an import of
  // TVMBackendAllocWorkspace, ...) is refused: its exported functions are
  // not known to follow TVM's packed calling convention. `trust_exports`
  // loads it anyway and calls its exported functions as packed functions
  // (hand-written kernels that carry no TVM marker).
  bool trust_exports = false;
  // Whose library loaders, probes, registered file kinds and blob record loaders read the
  // file (null: the process's default runtime). The modules the load makes keep using it
  // (a graph executor factory's and a Relax executable's devices and global functions), so
  // it must outlive them. An image already loaded and still alive is shared only by loads
  // through the runtime that loaded it (docs/architecture.md, "Process-wide state").
  Runtime* runtime = nullptr;
};

// Loads a TVM library (.so, or a .tar export) and returns its root module.
Module load_module(const std::string& path, const LoadOptions& options = {});
// Same, from an in-memory image (loaders that support it, e.g. "elf").
Module load_module_from_memory(const uint8_t* data, size_t size, const LoadOptions& options = {});
// Builds the module tree for an already loaded image (refused like a file
// without TVM markers unless `options.trust_exports`).
Module load_module_from_library(std::shared_ptr<Library> library, const LoadOptions& options = {});
// Creates a library module over the system-lib symbol table (`prefix` first).
Module system_lib(const std::string& prefix = "");

// A one-line-per-module text of the tree ("GraphExecutorFactory\n  library ...").
std::string describe_module_tree(const Module& root);

}  // namespace graphrt
#pragma GCC visibility pop

// The library's own (not exported).
namespace graphrt {
// Every module `root` imports, directly or not, each once, depth-first.
// Imports form a DAG (a module may be shared by several importers): walks of
// the tree use this, so a shared module is never visited once per path.
std::vector<ModuleNode*> imported_modules(const ModuleNode& root);
}  // namespace graphrt
