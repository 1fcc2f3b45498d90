#include "abi/object_types.h"

#include <mutex>
#include <vector>

#include "graphrt/error.h"

namespace graphrt {

namespace {
struct TypeTable {
  std::mutex mutex;
  // TVM v0.18's static type indices, in order; dynamic keys are appended.
  std::vector<std::string> keys = {"runtime.Object",      "runtime.Module",       "runtime.NDArray",
                                   "runtime.String",      "Array",                "Map",
                                   "runtime.ShapeTuple",  "runtime.PackedFunc",   "runtime.disco.DRef",
                                   "runtime.RPCObjectRef", "runtime.Closure",     "runtime.ADT"};

  // Index of `key`, or -1.
  int64_t find(const std::string& key) const {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return static_cast<int64_t>(i);
    }
    return -1;
  }
};

// Process-wide, not the Runtime's: TVM's C ABI forces it (TVMObjectTypeKey2Index hands
// out indices that libraries cache in their own statics).
TypeTable& type_table() {
  static TypeTable* table = new TypeTable();  // never destroyed: handles may outlive static destruction
  return *table;
}

void check_index(const TypeTable& table, uint32_t index) {
  if (index >= table.keys.size())
    throw Error(ErrorKind::kNotFound, "unknown object type index " + std::to_string(index) + " (known: 0.." +
                std::to_string(table.keys.size() - 1) + ")");
}
}  // namespace

uint32_t object_type_index(const Object& object) {
  TypeTable& table = type_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  std::string key = object.object_type_key();
  int64_t index = table.find(key);
  if (index >= 0) return static_cast<uint32_t>(index);
  table.keys.push_back(key);
  return static_cast<uint32_t>(table.keys.size() - 1);
}

uint32_t object_type_index_of_key(const std::string& key) {
  TypeTable& table = type_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  int64_t index = table.find(key);
  if (index < 0) throw Error(ErrorKind::kNotFound, "unknown object type key '" + key + "'");
  return static_cast<uint32_t>(index);
}

std::string object_type_key_of_index(uint32_t index) {
  TypeTable& table = type_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  check_index(table, index);
  return table.keys[index];
}

bool object_type_derived_from(uint32_t child, uint32_t parent) {
  TypeTable& table = type_table();
  std::lock_guard<std::mutex> lock(table.mutex);
  check_index(table, child);
  check_index(table, parent);
  return child == parent || parent == kObjectTypeIndexRoot;
}

}  // namespace graphrt
