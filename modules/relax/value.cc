#include "modules/relax/value.h"

namespace graphrt {
namespace relax {

const char* value_kind_name(const Value& v) {
  static const char* const kNames[] = {"None",  "int",     "float",     "DataType", "String",   "NDArray", "Shape",
                                       "Tuple", "Closure", "Storage",   "PackedFunc", "VM"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == std::variant_size<Value>::value, "one name per kind");
  return kNames[v.index()];
}

}  // namespace relax
}  // namespace graphrt
