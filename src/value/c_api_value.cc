// graphrt's C API for values (graphrt/c_api.h, "values"): a result's kind,
// tuple items and shape dims read through the core's containers, behind the one
// C guard. What C and Python use where TVM's front ends call
// runtime.ArraySize / runtime.GetShapeTupleElem by name.
#include <string>

#include "graphrt/c_api.h"
#include "graphrt/value.h"
#include "layer_api/c_api_guard.h"

namespace graphrt {
namespace {

template <typename T>
void require_out(T* out, const char* function) {
  if (!out) throw Error(std::string(function) + ": null output pointer");
}

template <typename T>
const T& container(TVMObjectHandle handle, const char* function, const char* what) {
  if (!handle) throw Error(std::string(function) + ": null " + what + " handle");
  const auto* p = dynamic_cast<const T*>(static_cast<const Object*>(handle));
  if (!p)
    throw Error(ErrorKind::kTypeMismatch, std::string(function) + ": the object is a " +
                                              static_cast<const Object*>(handle)->object_type_key() + ", not a " + what);
  return *p;
}

}  // namespace
}  // namespace graphrt

using graphrt::ArrayObject;
using graphrt::Error;
using graphrt::ShapeObject;
using graphrt::graphrt_api_guard;

extern "C" GRAPHRT_API int graphrt_value_kind(const TVMValue* value, int type_code, int* out) {
  return graphrt_api_guard([&] {
    if (!value) throw Error("graphrt_value_kind: null value");
    graphrt::require_out(out, "graphrt_value_kind");
    *out = static_cast<int>(graphrt::value_kind_of(graphrt::TVMArgs(value, &type_code, 1), 0));
  });
}

extern "C" GRAPHRT_API int graphrt_value_tuple_size(TVMObjectHandle tuple, int64_t* out) {
  return graphrt_api_guard([&] {
    graphrt::require_out(out, "graphrt_value_tuple_size");
    *out = static_cast<int64_t>(graphrt::container<ArrayObject>(tuple, "graphrt_value_tuple_size", "tuple").size());
  });
}

extern "C" GRAPHRT_API int graphrt_value_tuple_item(TVMObjectHandle tuple, int64_t index, TVMValue* out,
                                                    int* out_type_code) {
  return graphrt_api_guard([&] {
    const ArrayObject& a = graphrt::container<ArrayObject>(tuple, "graphrt_value_tuple_item", "tuple");
    graphrt::require_out(out, "graphrt_value_tuple_item");
    graphrt::require_out(out_type_code, "graphrt_value_tuple_item");
    if (index < 0 || static_cast<uint64_t>(index) >= a.size())
      throw Error(graphrt::ErrorKind::kOutOfRange, "graphrt_value_tuple_item: index " + std::to_string(index) +
                                                       " of a tuple of " + std::to_string(a.size()));
    graphrt::RetValue item;
    a.get_item(static_cast<size_t>(index), &item);
    item.release_to_c(out, out_type_code);
  });
}

extern "C" GRAPHRT_API int graphrt_value_shape_rank(TVMObjectHandle shape, int* out) {
  return graphrt_api_guard([&] {
    graphrt::require_out(out, "graphrt_value_shape_rank");
    *out = static_cast<int>(graphrt::container<ShapeObject>(shape, "graphrt_value_shape_rank", "shape").dims.size());
  });
}

extern "C" GRAPHRT_API int graphrt_value_shape_dims(TVMObjectHandle shape, const int64_t** out) {
  return graphrt_api_guard([&] {
    graphrt::require_out(out, "graphrt_value_shape_dims");
    *out = graphrt::container<ShapeObject>(shape, "graphrt_value_shape_dims", "shape").dims.data();
  });
}
