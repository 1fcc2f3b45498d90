// graphrt::vm::VmModule — the interface every VM module implements.
//
// Like IREE's iree_vm_module_t: a module is immutable code plus metadata
// (name, version, dependencies, imports, exports with cconv signatures) and
// makes one mutable ModuleState per context. Bytecode, native and dynamic
// (.so) modules all implement this; a Context links them by fully qualified
// name ("module.function").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/vm/host/vm_value.h"

namespace graphrt {
namespace vm {

class VmModule;
class ModuleState;
class Stack;

struct Dependency {
  std::string name;
  uint32_t min_version = 0;
  bool optional = false;
  // Where a host may load the module from when it is not registered yet:
  // "lib.so[@create][?k=v]" (relative paths are relative to the model) or
  // empty (a built-in or host-provided module, found by name). See Program.
  std::string source;
};

struct ImportDecl {
  std::string full_name;  // "module.function"
  std::string signature;  // cconv, compared canonically with the export's at link
  bool optional = false;  // unresolved optional imports trap only when called
};

struct ExportDecl {
  std::string name;       // local name, without the module prefix
  std::string signature;
};

// A callable function bound to one module state (a resolved import, or a
// host-resolved export).
struct FunctionRef {
  VmModule* module = nullptr;
  ModuleState* state = nullptr;
  uint32_t ordinal = 0;  // export ordinal in `module`
  bool resolved() const { return module != nullptr; }
};

class ModuleState {
 public:
  virtual ~ModuleState() = default;
  // Filled by the Context at link time, one entry per ImportDecl.
  std::vector<FunctionRef> imports;
};

class VmModule {
 public:
  virtual ~VmModule() = default;
  virtual const std::string& name() const = 0;
  virtual uint32_t version() const = 0;
  virtual const std::vector<Dependency>& dependencies() const = 0;
  virtual const std::vector<ImportDecl>& imports() const = 0;
  virtual const std::vector<ExportDecl>& exports() const = 0;
  virtual std::unique_ptr<ModuleState> create_state() { return std::make_unique<ModuleState>(); }
  // Runs export `ordinal` with `args` laid out per its signature (the caller
  // guarantees this: link-time signature checks or check_values); appends the
  // results to *results.
  virtual void call(Stack& stack, ModuleState& state, uint32_t ordinal, const std::vector<Value>& args,
                    std::vector<Value>* results) = 0;

  // Export ordinal by local name, or -1.
  int lookup_export(const std::string& name) const;
};

// Calls a resolved function (throws for an unresolved optional import).
void invoke_function(Stack& stack, const FunctionRef& fn, const std::vector<Value>& args,
                   std::vector<Value>* results);

}  // namespace vm
}  // namespace graphrt
