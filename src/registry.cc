// The global function registry (TVM's Registry), held by the Runtime.
#include "graphrt/registry.h"

#include "graphrt/runtime.h"
#include "runtime_tables.h"

namespace graphrt {

void Runtime::set_function(const std::string& name, PackedFunc f, bool override) {
  std::lock_guard<std::mutex> lock(tables_->functions_mutex);
  auto it = tables_->functions.find(name);
  if (it != tables_->functions.end() && !override)
    throw Error(ErrorKind::kFailedPrecondition, "global function " + quote_untrusted(name) + " is already registered");
  tables_->functions[name] = std::move(f);
}

PackedFunc Runtime::function(const std::string& name) const {
  std::lock_guard<std::mutex> lock(tables_->functions_mutex);
  auto it = tables_->functions.find(name);
  return it == tables_->functions.end() ? PackedFunc() : it->second;
}

bool Runtime::remove_function(const std::string& name) {
  std::lock_guard<std::mutex> lock(tables_->functions_mutex);
  return tables_->functions.erase(name) > 0;
}

std::vector<std::string> Runtime::function_names() const {
  std::lock_guard<std::mutex> lock(tables_->functions_mutex);
  std::vector<std::string> names;
  for (const auto& kv : tables_->functions) names.push_back(kv.first);
  return names;
}

void registry_set(const std::string& name, PackedFunc f, bool override) {
  runtime().set_function(name, std::move(f), override);
}
PackedFunc registry_get(const std::string& name) { return runtime().function(name); }
bool registry_remove(const std::string& name) { return runtime().remove_function(name); }
std::vector<std::string> registry_names() { return runtime().function_names(); }

}  // namespace graphrt
