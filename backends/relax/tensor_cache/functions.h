// TVM's tensor cache functions as graphrt global functions (TVM v0.26
// src/runtime/vm/tensor_cache_support.cc; the names before v0.22 were
// vm.builtin.ndarray_cache.*, registered too):
//
//   vm.builtin.tensor_cache.load(folder, device_type, device_id)
//   vm.builtin.tensor_cache.get(name) -> tensor or None
//   vm.builtin.tensor_cache.update(name, tensor[, override])
//   vm.builtin.tensor_cache.remove(name), vm.builtin.tensor_cache.clear()
//   vm.builtin.param_array_from_cache(prefix, n) -> [prefix_0 .. prefix_{n-1}]
//       (n = -1: up to the first name missing)
//   vm.builtin.param_array_from_cache_by_name(names) -> [tensors]
//   vm.builtin.param_array_from_cache_by_name_unpacked(name, ...) -> [tensors]
//   vm.builtin.param_module_from_cache(prefix, n),
//   vm.builtin.param_module_from_cache_by_name(names)
//       -> a module whose get_params() returns the array
//   graphrt.tensor_cache.load_params(folder, device_type, device_id, name...)
//       -> [tensors] of those names (none: param_0, param_1, ...), read from the
//       folder without the store (graphrt's own: MLC folders in LanguageModel)
//
// The arrays live in one store per runtime (TVM: one per process). An
// executable's calls reach them as packed functions; an engine calls them by
// name, as MLC-LLM does before it calls the model.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace relax {

void register_tensor_cache_functions(Runtime& runtime);

}  // namespace relax
}  // namespace graphrt
