// The KV state builtins (TVM v0.26 kv_state.cc / paged_kv_cache.cc names):
// vm.builtin.paged_attention_kv_cache_create, vm.builtin.kv_state_* and
// vm.builtin.attention_kv_cache_*. The VM calls them natively (the builtin
// table); they are also global functions, as in TVM, for the engine that
// drives a model step by step (add a sequence, begin a forward pass, ...).
#pragma once

#include <cstddef>

#include "graphrt/runtime.h"
#include "backends/relax/builtin.h"

namespace graphrt {
namespace relax {

const BuiltinEntry* kv_cache_builtins(size_t* count);
void register_kv_cache_functions(Runtime& runtime);

}  // namespace relax
}  // namespace graphrt
