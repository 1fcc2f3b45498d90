#include "graphrt/module.h"

#include <algorithm>
#include <sstream>

#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "library_module.h"
#include "layer_api/string_distance.h"

namespace graphrt {

ModuleNode::~ModuleNode() {
  if (shared_image_key) forget_shared_tree(shared_image_key, this);
}

PackedFunc ModuleNode::get_function(const std::string& name, bool query_imports) {
  Module self(this);
  PackedFunc f = find_function(name, self);
  if (f || !query_imports) return f;
  for (const Module& m : imports_) {
    f = m->get_function(name, true);
    if (f) return f;
  }
  return PackedFunc();
}

static void collect_names(const ModuleNode* m, std::vector<std::string>* out) {
  for (const std::string& n : m->function_names()) out->push_back(n);
  for (const Module& child : m->imports()) collect_names(child.get(), out);
}

PackedFunc ModuleNode::require_function(const std::string& name) {
  PackedFunc f = get_function(name, true);
  if (f) return f;
  std::vector<std::string> names;
  collect_names(this, &names);
  std::string hint = closest_matches(name, names, 3);
  throw Error(ErrorKind::kNotFound, "function '" + name + "' not found in module '" + type_key() + "' or its imports" +
              (hint.empty() ? "" : " (did you mean: " + hint + "?)"))
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
                "cannot find function '" + name + "' in the imported modules or global registry").with("symbol", name);
  env_cache_[name] = f;  // generated code caches the raw handle forever
  return f.get();
}

void ModuleNode::add_import(const Module& m) {
  if (m.get() == this) throw Error("a module cannot import itself");
  imports_.push_back(m);
}

static void describe(const ModuleNode* m, int depth, std::ostringstream& os) {
  os << std::string(depth * 2, ' ') << m->type_key();
  std::vector<std::string> names = m->function_names();
  if (!names.empty()) {
    os << " [" << names.size() << " functions:";
    for (const std::string& n : names) os << " " << n;
    os << "]";
  }
  os << "\n";
  for (const Module& child : m->imports()) describe(child.get(), depth + 1, os);
}

std::string describe_module_tree(const Module& root) {
  std::ostringstream os;
  describe(root.get(), 0, os);
  return os.str();
}

}  // namespace graphrt
