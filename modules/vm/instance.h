// graphrt::vm::Instance — process-shared VM state.
//
// Owns the registry of native module factories by name ("tensor", "tvm", and
// whatever a host adds) so that a Program can register the native modules a
// bytecode module depends on without the bytecode naming C++ types. Shared by
// contexts through std::shared_ptr; thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "modules/vm/module.h"

namespace graphrt {
namespace vm {

using ModuleFactory = std::function<std::shared_ptr<Module>()>;

class Instance {
 public:
  static std::shared_ptr<Instance> create();

  void register_module_factory(const std::string& name, ModuleFactory factory);
  // A fresh module from the named factory, or nullptr when none is registered.
  std::shared_ptr<Module> create_module(const std::string& name) const;
  std::vector<std::string> module_factory_names() const;

  // Ref type names the VM knows (reflection/tooling).
  static std::vector<std::string> ref_type_names() { return {"vm.buffer", "vm.list", "vm.tensor"}; }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, ModuleFactory> factories_;
};

}  // namespace vm
}  // namespace graphrt
