// The Relax back end's registration: loaders for the executable's record
// under both type keys TVM has used, and TVM's Array constructor, which makes
// a Relax tuple (the core registers the functions that read tuples and shapes,
// src/value/value_functions.cc).
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
