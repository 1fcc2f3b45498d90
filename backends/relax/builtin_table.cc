#include <map>
#include <string>

#include "backends/relax/builtin.h"
#include "backends/relax/kv_cache/builtins.h"

namespace graphrt {
namespace relax {

namespace {

std::map<std::string, BuiltinFn> build_table() {
  std::map<std::string, BuiltinFn> table;
  for (auto family : {shape_builtins, storage_builtins, data_builtins, set_builtins, cuda_graph_builtins, kv_cache_builtins}) {
    size_t n = 0;
    const BuiltinEntry* entries = family(&n);
    for (size_t i = 0; i < n; ++i) table.emplace(entries[i].name, entries[i].fn);
  }
  return table;
}

}  // namespace

BuiltinFn find_builtin(const std::string& name) {
  static const std::map<std::string, BuiltinFn> table = build_table();
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace relax
}  // namespace graphrt
