#include "backends/relax/value.h"

#include <algorithm>

#include "backends/relax/packed_convention.h"

namespace graphrt {
namespace relax {

size_t nested_depth(const std::vector<Value>& items) {
  size_t deepest = 0;
  for (const Value& v : items) {
    if (const auto* t = std::get_if<Ref<TupleObj>>(&v)) deepest = std::max(deepest, (*t)->depth);
    if (const auto* c = std::get_if<Ref<ClosureObj>>(&v)) deepest = std::max(deepest, (*c)->depth);
  }
  return deepest + 1;
}

void TupleObj::get_item(size_t index, RetValue* out) const { value_to_ret(items[index], out); }

const char* value_kind_name(const Value& v) {
  static const char* const kNames[] = {"None",  "int",     "float",     "DataType", "String",   "NDArray", "Shape",
                                       "Tuple", "Closure", "Storage",   "PackedFunc", "VM",    "State"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == std::variant_size<Value>::value, "one name per kind");
  return kNames[v.index()];
}

}  // namespace relax
}  // namespace graphrt
