#include "backends/vm/host/context.h"

#include "graphrt/error.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/host/signature.h"

namespace graphrt {
namespace vm {

std::pair<std::string, std::string> split_full_name(const std::string& full_name) {
  const size_t dot = full_name.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == full_name.size()) {
    throw Error("function name is not fully qualified (module.function)").with("name", full_name);
  }
  return {full_name.substr(0, dot), full_name.substr(dot + 1)};
}

Context::Context(std::shared_ptr<Instance> instance)
    : instance_(std::move(instance)), budget_(instance_->limits()->instruction_budget) {}

void Context::prepare(Stack& stack) const {
  stack.set_budget(budget_);
  stack.watch(*interrupt_);
}

Context::~Context() {
  // __deinit in reverse order, errors ignored (teardown cannot fail), then
  // states before their modules, newest first.
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    try {
      run_lifecycle(*it, "__deinit");
    } catch (const std::exception&) {
    }
  }
  while (!entries_.empty()) {
    entries_.back().state.reset();
    entries_.pop_back();
  }
}

const Context::Entry* Context::find(const std::string& name) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->module->name() == name) return &*it;
  }
  return nullptr;
}

bool Context::has_module(const std::string& name) const { return find(name) != nullptr; }

const VmModule* Context::find_module(const std::string& name) const {
  const Entry* entry = find(name);
  return entry ? entry->module.get() : nullptr;
}

void Context::check_dependencies(const VmModule& module) const {
  for (const Dependency& dep : module.dependencies()) {
    const Entry* found = find(dep.name);
    if (!found) {
      if (dep.optional) continue;
      throw Error(ErrorKind::kNotFound,
                  "required module '" + dep.name + "' is not registered").with("module", module.name());
    }
    if (found->module->version() < dep.min_version) {
      throw Error("required module '" + dep.name + "' version mismatch; have " +
                  std::to_string(found->module->version()) + " but require " +
                  std::to_string(dep.min_version))
          .with("module", module.name());
    }
  }
}

void Context::link_imports(const VmModule& module, ModuleState& state) const {
  const std::vector<ImportDecl>& imports = module.imports();
  state.imports.assign(imports.size(), FunctionRef{});
  for (size_t i = 0; i < imports.size(); ++i) {
    const ImportDecl& decl = imports[i];
    try {
      const auto names = split_full_name(decl.full_name);
      const Entry* target = find(names.first);
      const int ordinal = target ? target->module->lookup_export(names.second) : -1;
      if (ordinal < 0) {
        if (decl.optional) continue;
        throw Error(ErrorKind::kNotFound, "import not found");
      }
      const std::string& have = target->module->exports()[static_cast<size_t>(ordinal)].signature;
      if (canonical_signature(have) != canonical_signature(decl.signature)) {
        throw Error(ErrorKind::kTypeMismatch,
                    "import signature mismatch: importer expects " + canonical_signature(decl.signature) +
                    " but the export is " + canonical_signature(have));
      }
      state.imports[i] = FunctionRef{target->module.get(), target->state.get(), static_cast<uint32_t>(ordinal)};
    } catch (Error& e) {
      throw e.with("module", module.name()).with("import", decl.full_name);
    }
  }
}

void Context::run_lifecycle(Entry& entry, const char* export_name) {
  const int ordinal = entry.module->lookup_export(export_name);
  if (ordinal < 0) return;
  LimitsScope scope(instance_->limits());
  std::vector<Value> results;
  Stack stack;
  prepare(stack);
  entry.module->call(stack, *entry.state, static_cast<uint32_t>(ordinal), {}, &results);
}

void Context::register_module(std::shared_ptr<VmModule> module) {
  GRAPHRT_CHECK(module != nullptr, "register_module: null module");
  check_dependencies(*module);
  Entry entry{module, module->create_state()};
  link_imports(*module, *entry.state);
  entries_.push_back(std::move(entry));
  try {
    run_lifecycle(entries_.back(), "__init");
  } catch (Error& e) {
    // Roll back: a module whose __init failed was never registered, so it gets
    // no __deinit.
    entries_.back().state.reset();
    entries_.pop_back();
    throw e.with("module", module->name()).with("during", "__init");
  }
}

FunctionRef Context::resolve(const std::string& full_name) const {
  const auto names = split_full_name(full_name);
  const Entry* entry = find(names.first);
  const int ordinal = entry ? entry->module->lookup_export(names.second) : -1;
  if (ordinal < 0) throw Error(ErrorKind::kNotFound, "VM function not found").with("function", full_name);
  return FunctionRef{entry->module.get(), entry->state.get(), static_cast<uint32_t>(ordinal)};
}

std::vector<Value> Context::invoke(const std::string& full_name, const std::vector<Value>& args) {
  Stack stack;
  stack.set_budget(budget_);
  return invoke(full_name, args, stack);
}

std::vector<Value> Context::invoke(const std::string& full_name, const std::vector<Value>& args,
                                   Stack& stack) {
  LimitsScope scope(instance_->limits());
  const FunctionRef fn = resolve(full_name);
  const Signature sig = parse_signature(fn.module->exports()[fn.ordinal].signature);
  check_values(sig.args, args, "arguments of " + full_name);
  stack.watch(*interrupt_);
  std::vector<Value> results;
  invoke_function(stack, fn, args, &results);
  return results;
}

}  // namespace vm
}  // namespace graphrt
