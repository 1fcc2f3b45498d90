// TVM's global functions over the core's containers (runtime.ArraySize,
// runtime.ArrayGetItem, runtime.ShapeTuple, runtime.GetShapeTupleSize,
// runtime.GetShapeTupleElem): what TVM's own front ends, the TVM-compatible
// Python modules and real TVM libraries call by name. graphrt's front doors
// read values through graphrt/value.h instead.
#include <string>
#include <vector>

#include "graphrt/runtime.h"
#include "graphrt/value.h"

namespace graphrt {

namespace {

template <typename T>
const T& object_arg(const TVMArgs& args, int i, const char* function) {
  const T* p = args.size() > i && args.code(i) == kTVMObjectHandle
                   ? dynamic_cast<const T*>(static_cast<const Object*>(args.value(i).v_handle))
                   : nullptr;
  if (!p) throw Error(ErrorKind::kTypeMismatch, std::string(function) + ": argument " + std::to_string(i) + " has the wrong type");
  return *p;
}

size_t index_arg(const TVMArgs& args, int i, size_t size, const char* function) {
  if (args.size() <= i) throw Error(std::string(function) + ": no index argument");
  const int64_t k = args.as_int(i);
  if (k < 0 || k >= static_cast<int64_t>(size))
    throw Error(ErrorKind::kOutOfRange, std::string(function) + ": index " + std::to_string(k) + " outside 0.." +
                                            std::to_string(static_cast<int64_t>(size) - 1));
  return static_cast<size_t>(k);
}

void set(Runtime& runtime, const char* name, PackedBody body) {
  runtime.set_function(name, make_function(std::move(body), name));
}

}  // namespace

void register_value_functions(Runtime& runtime) {
  set(runtime, "runtime.ArraySize", [](const TVMArgs& args, RetValue* ret) {
    ret->set_int(static_cast<int64_t>(object_arg<ArrayObject>(args, 0, "runtime.ArraySize").size()));
  });
  set(runtime, "runtime.ArrayGetItem", [](const TVMArgs& args, RetValue* ret) {
    const ArrayObject& a = object_arg<ArrayObject>(args, 0, "runtime.ArrayGetItem");
    a.get_item(index_arg(args, 1, a.size(), "runtime.ArrayGetItem"), ret);
  });
  set(runtime, "runtime.ShapeTuple", [](const TVMArgs& args, RetValue* ret) {
    std::vector<int64_t> dims;
    dims.reserve(static_cast<size_t>(args.size()));
    for (int i = 0; i < args.size(); ++i) dims.push_back(args.as_int(i));
    ret->set_object(Ref<Object>(make_ref<ShapeObject>(std::move(dims))));
  });
  set(runtime, "runtime.GetShapeTupleSize", [](const TVMArgs& args, RetValue* ret) {
    ret->set_int(static_cast<int64_t>(object_arg<ShapeObject>(args, 0, "runtime.GetShapeTupleSize").dims.size()));
  });
  set(runtime, "runtime.GetShapeTupleElem", [](const TVMArgs& args, RetValue* ret) {
    const ShapeObject& s = object_arg<ShapeObject>(args, 0, "runtime.GetShapeTupleElem");
    ret->set_int(s.dims[index_arg(args, 1, s.dims.size(), "runtime.GetShapeTupleElem")]);
  });
}

}  // namespace graphrt
