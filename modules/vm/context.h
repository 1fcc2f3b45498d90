// graphrt::vm::Context — an ordered set of modules with one state each.
//
// register_module() follows IREE's order: check dependencies against modules
// already registered (name + minimum version), resolve every import by
// fully-qualified name against registered modules newest first, compare
// signatures, then run the module's optional `__init` export. On destruction
// each module's optional `__deinit` runs in reverse registration order, then
// states and modules are released in reverse order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "modules/vm/instance.h"
#include "modules/vm/module.h"
#include "modules/vm/stack.h"

namespace graphrt {
namespace vm {

class Context {
 public:
  explicit Context(std::shared_ptr<Instance> instance);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Throws graphrt::Error (with "module"/"import" context) and leaves the
  // context unchanged when linking or `__init` fails.
  void register_module(std::shared_ptr<Module> module);
  bool has_module(const std::string& name) const;
  const std::shared_ptr<Instance>& instance() const { return instance_; }

  // "module.function" -> callable export (no signature check).
  FunctionRef resolve(const std::string& full_name) const;
  // Host invocation: checks `args` against the export's signature.
  std::vector<Value> invoke(const std::string& full_name, const std::vector<Value>& args);
  std::vector<Value> invoke(const std::string& full_name, const std::vector<Value>& args, Stack& stack);

 private:
  struct Entry {
    std::shared_ptr<Module> module;
    std::unique_ptr<ModuleState> state;
  };
  void check_dependencies(const Module& module) const;
  void link_imports(const Module& module, ModuleState& state) const;
  const Entry* find(const std::string& name) const;
  void run_lifecycle(Entry& entry, const char* export_name);

  std::shared_ptr<Instance> instance_;
  std::vector<Entry> entries_;
};

// Splits "a.b.c" at the first '.' into {"a", "b.c"}; throws when no dot.
std::pair<std::string, std::string> split_full_name(const std::string& full_name);

}  // namespace vm
}  // namespace graphrt
