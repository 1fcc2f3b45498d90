#include "graphrt/registry.h"

#include <map>
#include <mutex>

namespace graphrt {

namespace {
struct Registry {
  std::mutex mutex;
  std::map<std::string, PackedFunc> functions;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: generated code may cache handles until exit
  return *r;
}
}  // namespace

void registry_set(const std::string& name, PackedFunc f, bool override) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.functions.find(name);
  if (it != r.functions.end() && !override)
    throw Error("global function '" + name + "' is already registered");
  r.functions[name] = std::move(f);
}

PackedFunc registry_get(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.functions.find(name);
  return it == r.functions.end() ? PackedFunc() : it->second;
}

bool registry_remove(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.functions.erase(name) > 0;
}

std::vector<std::string> registry_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& kv : r.functions) names.push_back(kv.first);
  return names;
}

}  // namespace graphrt
