// The Relax back end's registration: loaders for the executable's record
// under both type keys TVM has used, and TVM's global functions that front
// ends use to read the tuples and shapes a Relax function returns.
#include "backends/relax/register.h"

#include <string>
#include <vector>

#include "src/layer_api/user_mistakes.h"
#include "graphrt/binary_loader.h"
#include "backends/relax/executable_module.h"
#include "backends/relax/kv_cache/builtins.h"
#include "backends/relax/packed_convention.h"
#include "backends/relax/tensor_cache/functions.h"

namespace graphrt {
namespace relax {

namespace {

template <typename T>
T& object_arg(const TVMArgs& args, int i, const char* function) {
  auto* p = dynamic_cast<T*>(args.as_object(i).get());
  if (!p) throw Error(ErrorKind::kTypeMismatch, std::string(function) + ": argument " + std::to_string(i) + " has the wrong type");
  return *p;
}

int64_t index_arg(const TVMArgs& args, int i, size_t size, const char* function) {
  const int64_t k = args.as_int(i);
  if (k < 0 || k >= static_cast<int64_t>(size))
    throw Error(ErrorKind::kOutOfRange, std::string(function) + ": index " + std::to_string(k) + " outside 0.." +
                                            std::to_string(static_cast<int64_t>(size) - 1));
  return k;
}

void set(Runtime& runtime, const std::string& name, PackedBody body) {
  runtime.set_function(name, make_function(std::move(body), name));
}

void register_container_functions(Runtime& runtime) {
  // TVM's Array constructor: front ends pass a Python list or tuple through it.
  set(runtime, "runtime.Array", [](const TVMArgs& args, RetValue* ret) {
    std::vector<Value> items;
    items.reserve(static_cast<size_t>(args.size()));
    for (int i = 0; i < args.size(); ++i) items.push_back(value_from_arg(args, i));
    ret->set_object(Ref<TupleObj>(make_ref<TupleObj>(std::move(items))));
  });
  set(runtime, "runtime.ArraySize", [](const TVMArgs& args, RetValue* ret) {
    ret->set_int(static_cast<int64_t>(object_arg<TupleObj>(args, 0, "runtime.ArraySize").items.size()));
  });
  set(runtime, "runtime.ArrayGetItem", [](const TVMArgs& args, RetValue* ret) {
    const TupleObj& t = object_arg<TupleObj>(args, 0, "runtime.ArrayGetItem");
    value_to_ret(t.items[static_cast<size_t>(index_arg(args, 1, t.items.size(), "runtime.ArrayGetItem"))], ret);
  });
  set(runtime, "runtime.ShapeTuple", [](const TVMArgs& args, RetValue* ret) {
    std::vector<int64_t> dims;
    for (int i = 0; i < args.size(); ++i) dims.push_back(args.as_int(i));
    ret->set_object(Ref<ShapeObj>(make_ref<ShapeObj>(std::move(dims))));
  });
  set(runtime, "runtime.GetShapeTupleSize", [](const TVMArgs& args, RetValue* ret) {
    ret->set_int(static_cast<int64_t>(object_arg<ShapeObj>(args, 0, "runtime.GetShapeTupleSize").dims.size()));
  });
  set(runtime, "runtime.GetShapeTupleElem", [](const TVMArgs& args, RetValue* ret) {
    const ShapeObj& s = object_arg<ShapeObj>(args, 0, "runtime.GetShapeTupleElem");
    ret->set_int(s.dims[static_cast<size_t>(index_arg(args, 1, s.dims.size(), "runtime.GetShapeTupleElem"))]);
  });
}

}  // namespace

void register_backend(Runtime& runtime) {
  register_container_functions(runtime);
  register_kv_cache_functions(runtime);
  register_tensor_cache_functions(runtime);
  for (const char* tkey : {"relax.Executable", "relax.VMExecutable"}) {
    const std::string key = tkey;
    register_module_usage_hint(runtime, key,
                               "a Relax executable (relax.build's export), not a graph executor factory or a graph's "
                               "kernels library: run it with a Relax VM (C++ graphrt::RelaxVM, Python "
                               "relax.VirtualMachine(lib, dev)), loaded as the model on its own");
    // The executables a runtime's loaders read belong to that runtime.
    runtime.register_binary_loader(key, [key, &runtime](BlobReader& reader) {
      return load_executable_module(reader, key, false, runtime);
    });
    runtime.register_bytes_loader(key, [key, &runtime](BlobReader& bytes) {
      return load_executable_module(bytes, key, true, runtime);
    });
  }
}

}  // namespace relax
}  // namespace graphrt
