// graphrt::vm::Instance — process-shared VM state.
//
// Owns the registry of native module factories by name, and the resource
// limits its contexts run under (limits.h). A Program whose
// bytecode declares a dependency without a source (`dependency NAME N`) and
// that is not linked yet gets it from its instance's factory of that name, so
// bytecode can use host modules without naming C++ types. Hosts register
// factories on their instance: each graphrt Runtime's VM back end has its own
// (register.cc); Instance::shared() is the default instance of Programs made
// without one (the standalone library, white-box tests).
// (`tensor` and `tvm` are always linked by Program and need no factory.)
// Shared by contexts through std::shared_ptr; thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vm/host/limits.h"
#include "backends/vm/host/module.h"

namespace graphrt {
namespace vm {

using ModuleFactory = std::function<std::shared_ptr<VmModule>()>;

class Instance {
 public:
  // An instance under `limits`; by default the set in force on this thread.
  static std::shared_ptr<Instance> create(std::shared_ptr<Limits> limits = current_limits());
  // The instance of Programs made without one, under default_limits().
  // Process-wide for the same reason as default_limits().
  static std::shared_ptr<Instance> shared();

  explicit Instance(std::shared_ptr<Limits> limits) : limits_(std::move(limits)) {}
  // The limits every context of this instance runs under.
  const std::shared_ptr<Limits>& limits() const { return limits_; }

  void register_module_factory(const std::string& name, ModuleFactory factory);
  // A fresh module from the named factory, or nullptr when none is registered.
  std::shared_ptr<VmModule> create_module(const std::string& name) const;
  std::vector<std::string> module_factory_names() const;

 private:
  const std::shared_ptr<Limits> limits_;
  mutable std::mutex mutex_;
  std::map<std::string, ModuleFactory> factories_;
};

}  // namespace vm
}  // namespace graphrt
