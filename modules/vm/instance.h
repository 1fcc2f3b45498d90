// graphrt::vm::Instance — process-shared VM state.
//
// Owns the registry of native module factories by name. A Program whose
// bytecode declares a dependency without a source (`dependency NAME N`) and
// that is not linked yet gets it from its instance's factory of that name, so
// bytecode can use host modules without naming C++ types. Hosts register
// factories on Instance::shared(), the default instance of every Program.
// (`tensor` and `tvm` are always linked by Program and need no factory.)
// Shared by contexts through std::shared_ptr; thread-safe.
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

using ModuleFactory = std::function<std::shared_ptr<VmModule>()>;

class Instance {
 public:
  static std::shared_ptr<Instance> create();
  // The process-wide instance Programs use by default.
  static std::shared_ptr<Instance> shared();

  void register_module_factory(const std::string& name, ModuleFactory factory);
  // A fresh module from the named factory, or nullptr when none is registered.
  std::shared_ptr<VmModule> create_module(const std::string& name) const;
  std::vector<std::string> module_factory_names() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, ModuleFactory> factories_;
};

}  // namespace vm
}  // namespace graphrt
