#include "module/import_tree.h"

#include <string>
#include <utility>

namespace graphrt {

// The first module on a cycle of the import graph given as rows of children
// (rows[i] = the modules module i imports), or -1 when it is a DAG. TVM's
// writer numbers modules depth-first, so a module imported by two others may
// come before one of them: order proves nothing, only a cycle is refused.
int64_t module_on_import_cycle(const std::vector<std::vector<uint64_t>>& rows) {
  enum : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<uint8_t> state(rows.size(), kUnseen);
  std::vector<std::pair<size_t, size_t>> stack;  // (module, next child position)
  for (size_t start = 0; start < rows.size(); ++start) {
    if (state[start] != kUnseen) continue;
    stack.emplace_back(start, 0);
    state[start] = kOnPath;
    while (!stack.empty()) {
      auto& top = stack.back();
      if (top.second == rows[top.first].size()) {
        state[top.first] = kDone;
        stack.pop_back();
        continue;
      }
      const uint64_t child = rows[top.first][top.second++];
      if (state[child] == kOnPath) return static_cast<int64_t>(child);
      if (state[child] == kUnseen) {
        state[child] = kOnPath;
        stack.emplace_back(child, 0);
      }
    }
  }
  return -1;
}

void attach_imports(BlobReader& reader, const std::vector<Module>& modules, const std::vector<uint64_t>& row_ptr,
                           const std::vector<uint64_t>& children) {
  size_t m = modules.size();
  if (row_ptr.size() != m + 1)
    throw reader.error("_import_tree has " + std::to_string(row_ptr.size()) + " row pointers for " +
                       std::to_string(m) + " modules (expected " + std::to_string(m + 1) + ")");
  if (row_ptr[0] != 0 || row_ptr[m] != children.size())
    throw reader.error("_import_tree row pointers do not span the child list");
  std::vector<std::vector<uint64_t>> rows(m);
  for (size_t i = 0; i < m; ++i) {
    if (row_ptr[i] > row_ptr[i + 1] || row_ptr[i + 1] > children.size())
      throw reader.error("_import_tree row pointers are not increasing within the child list at module " +
                         std::to_string(i));
    for (uint64_t j = row_ptr[i]; j < row_ptr[i + 1]; ++j) {
      const uint64_t child = children[j];
      if (child >= m)
        throw reader.error("_import_tree: module " + std::to_string(i) + " (" + quote_untrusted(modules[i]->type_key()) +
                           ") imports module " + std::to_string(child) + ", but the blob has " + std::to_string(m));
      if (child == i)
        throw reader.error("_import_tree: module " + std::to_string(i) + " (" + quote_untrusted(modules[i]->type_key()) +
                           ") imports itself");
      rows[i].push_back(child);
    }
  }
  const int64_t cyclic = module_on_import_cycle(rows);
  if (cyclic >= 0)
    throw reader.error("_import_tree: module " + std::to_string(cyclic) + " (" + quote_untrusted(modules[cyclic]->type_key()) +
                       ") imports itself through a cycle");
  for (size_t i = 0; i < m; ++i)
    for (uint64_t child : rows[i]) modules[i]->add_import(modules[child]);
}

}  // namespace graphrt
