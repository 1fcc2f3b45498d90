#include "layer_api/user_mistakes.h"
#include "graphrt/module.h"

#include <algorithm>
#include <sstream>

#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "module/library_module.h"
#include "layer_api/string_distance.h"

namespace graphrt {

ModuleNode::~ModuleNode() {
  if (shared_image_key) forget_shared_tree(shared_image_key, this);
}

// A crafted tree of stacked diamonds would take 2^depth steps of a naive recursion.
std::vector<ModuleNode*> imported_modules(const ModuleNode& root_node) {
  const ModuleNode* root = &root_node;
  std::vector<ModuleNode*> order;
  std::vector<const ModuleNode*> stack{root};
  std::vector<const ModuleNode*> seen{root};
  while (!stack.empty()) {
    const ModuleNode* m = stack.back();
    stack.pop_back();
    const std::vector<Module>& imports = m->imports();
    for (auto it = imports.rbegin(); it != imports.rend(); ++it) {
      ModuleNode* child = it->get();
      if (std::find(seen.begin(), seen.end(), child) != seen.end()) continue;
      seen.push_back(child);
      stack.push_back(child);
    }
    if (m != root) order.push_back(const_cast<ModuleNode*>(m));
  }
  return order;
}

PackedFunc ModuleNode::get_function(const std::string& name, bool query_imports) {
  Module self(this);
  PackedFunc f = find_function(name, self);
  if (f || !query_imports || imports_.empty()) return f;
  for (ModuleNode* m : imported_modules(*this)) {
    f = m->get_function(name, false);
    if (f) return f;
  }
  return PackedFunc();
}

static void collect_names(const ModuleNode* m, std::vector<std::string>* out) {
  for (const std::string& n : m->function_names()) out->push_back(n);
  for (const ModuleNode* child : imported_modules(*m))
    for (const std::string& n : child->function_names()) out->push_back(n);
}

PackedFunc ModuleNode::require_function(const std::string& name) {
  PackedFunc f = get_function(name, true);
  if (f) return f;
  std::vector<std::string> names;
  collect_names(this, &names);
  std::string hint = closest_matches(name, names, 3);
  const std::string usage = module_usage_hint(type_key());
  throw Error(ErrorKind::kNotFound, "function " + quote_untrusted(name) + " not found in module " + quote_untrusted(type_key()) + " or its imports" +
              (hint.empty() ? "" : " (did you mean: " + hint + "?)") + (usage.empty() ? "" : ": this is " + usage))
      .with("symbol", name);
}

FunctionNode* ModuleNode::get_func_from_env(const std::string& name) {
  std::lock_guard<std::mutex> lock(env_cache_mutex_);
  auto it = env_cache_.find(name);
  if (it != env_cache_.end()) return it->second.get();
  PackedFunc f;
  for (const Module& m : imports_) {
    f = m->get_function(name, true);
    if (f) break;
  }
  if (!f) f = registry_get(name);
  if (!f)
    throw Error(ErrorKind::kNotFound,
                "cannot find function " + quote_untrusted(name) + " in the imported modules or global registry").with("symbol", name);
  env_cache_[name] = f;  // generated code caches the raw handle forever
  return f.get();
}

void ModuleNode::add_import(const Module& m) {
  if (m.get() == this) throw Error("a module cannot import itself");
  imports_.push_back(m);
}

static void describe(const ModuleNode* m, int depth, std::vector<const ModuleNode*>* described,
                     std::ostringstream& os) {
  os << std::string(depth * 2, ' ') << m->type_key();
  // A module imported by several others is listed in full once.
  if (std::find(described->begin(), described->end(), m) != described->end()) {
    os << " (listed above)\n";
    return;
  }
  described->push_back(m);
  std::vector<std::string> names = m->function_names();
  if (!names.empty()) {
    os << " [" << names.size() << " functions:";
    for (const std::string& n : names) os << " " << n;
    os << "]";
  }
  os << "\n";
  for (const Module& child : m->imports()) describe(child.get(), depth + 1, described, os);
}

std::string describe_module_tree(const Module& root) {
  std::ostringstream os;
  std::vector<const ModuleNode*> described;
  describe(root.get(), 0, &described, os);
  return os.str();
}

}  // namespace graphrt
