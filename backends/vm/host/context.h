// graphrt::vm::Context — an ordered set of modules with one state each.
//
// register_module() follows IREE's order: check dependencies against modules
// already registered (name + minimum version), resolve every import by
// fully-qualified name against registered modules newest first, compare
// signatures, then run the module's optional `__init` export. On destruction
// each module's optional `__deinit` runs in reverse registration order, then
// states and modules are released in reverse order.
//
// Every invocation the context starts (host calls, `__init`, `__deinit`) runs
// under the context's instruction budget and watches its Interrupt, so
// interrupt() from any thread stops whatever runs in the context now, and
// under its instance's limits (limits.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/vm/host/instance.h"
#include "backends/vm/host/interrupt.h"
#include "backends/vm/host/module.h"
#include "backends/vm/host/stack.h"

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
  void register_module(std::shared_ptr<VmModule> module);
  bool has_module(const std::string& name) const;
  // The module registered last under `name`, or null.
  const VmModule* find_module(const std::string& name) const;
  const std::shared_ptr<Instance>& instance() const { return instance_; }

  // "module.function" -> callable export (no signature check).
  FunctionRef resolve(const std::string& full_name) const;
  // Host invocation: checks `args` against the export's signature. The first
  // form runs under the context's budget; the second keeps `stack`'s budget.
  // Both stop when interrupt() is called while they run.
  std::vector<Value> invoke(const std::string& full_name, const std::vector<Value>& args);
  std::vector<Value> invoke(const std::string& full_name, const std::vector<Value>& args, Stack& stack);

  // Branches + calls per invocation (default: the instance's instruction_budget).
  void set_instruction_budget(uint64_t budget) { budget_ = budget; }
  uint64_t instruction_budget() const { return budget_; }
  // Thread-safe: stops every invocation running in this context now.
  void interrupt() { interrupt_->request(); }
  // Shared so that a canceller may outlive a call in flight without owning the context.
  const std::shared_ptr<Interrupt>& interrupt_source() const { return interrupt_; }

 private:
  struct Entry {
    std::shared_ptr<VmModule> module;
    std::unique_ptr<ModuleState> state;
  };
  void check_dependencies(const VmModule& module) const;
  void link_imports(const VmModule& module, ModuleState& state) const;
  const Entry* find(const std::string& name) const;
  void run_lifecycle(Entry& entry, const char* export_name);

  void prepare(Stack& stack) const;

  std::shared_ptr<Instance> instance_;
  std::vector<Entry> entries_;
  uint64_t budget_;
  std::shared_ptr<Interrupt> interrupt_ = std::make_shared<Interrupt>();
};

// Splits "a.b.c" at the first '.' into {"a", "b.c"}; throws when no dot.
std::pair<std::string, std::string> split_full_name(const std::string& full_name);

}  // namespace vm
}  // namespace graphrt
