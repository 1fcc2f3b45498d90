#include "generation/kv_cache_model.h"

#include <algorithm>

#include "common/packed_args.h"
#include "common/relax_model.h"
#include "generation/greedy.h"
#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::RetValue;
using graphrt_apps::call_packed;
using graphrt_apps::global_function;
using graphrt_apps::int_arg;

namespace {

graphrt::PackedFunc vm_function(const graphrt::Module& vm, const std::string& name, const char* key) {
  try {
    return vm->require_function(name);
  } catch (Error& e) {
    throw e.with("field", std::string("generation.") + key);
  }
}

RetValue tuple_item(const RetValue& tuple, int64_t i) {
  return call_packed(global_function("runtime.ArrayGetItem"), {tuple, int_arg(i)});
}

}  // namespace

bool exports_kv_cache_functions(const graphrt::Module& root, const GenerationConfig& config) {
  try {
    const graphrt::Module vm = graphrt_apps::open_relax_function(root, config.prefill).vm;
    return vm->get_function(config.create_cache) && vm->get_function(config.decode);
  } catch (const Error&) {
    return false;
  }
}

KvCacheModel::KvCacheModel(const graphrt::Module& root, const GenerationConfig& config) : config_(config) {
  graphrt_apps::RelaxFunction fn;
  try {
    fn = graphrt_apps::open_relax_function(root, config.prefill);
  } catch (Error& e) {
    throw e.with("field", "generation.prefill");
  }
  vm_ = fn.vm;
  prefill_ = vm_function(vm_, config.prefill, "prefill");
  decode_ = vm_function(vm_, config.decode, "decode");
  if (!fn.params.empty() && fn.params[0].known) ids_dtype_ = fn.params[0].dtype;
  if (ids_dtype_.code != kDLInt || (ids_dtype_.bits != 32 && ids_dtype_.bits != 64))
    throw Error(graphrt::ErrorKind::kUnsupported, "the prefill function takes token ids of a type other than int32/int64")
        .with("field", "generation.prefill");
  begin_ = global_function("vm.builtin.kv_state_begin_forward");
  end_ = global_function("vm.builtin.kv_state_end_forward");
  add_ = global_function("vm.builtin.kv_state_add_sequence");
  remove_ = global_function("vm.builtin.kv_state_remove_sequence");
  shape_tuple_ = global_function("runtime.ShapeTuple");
  const GenerationConfig& c = config;
  try {
    cache_ = call_packed(vm_function(vm_, c.create_cache, "create_cache"),
                         {shape(c.max_batch_size), shape(c.max_total_seq_len), shape(c.prefill_chunk_size),
                          shape(c.page_size), shape(0)});
    add_sequence(0);  // the probe: one token tells the vocabulary and that the functions work
    const int32_t zero = 0;
    vocab_ = forward(prefill_, 0, &zero, 1).shape().back();
    remove_sequence(0);
  } catch (Error& e) {
    throw e.with("field", "generation");
  }
}

RetValue KvCacheModel::shape(int64_t v) const { return call_packed(shape_tuple_, {int_arg(v)}); }

void KvCacheModel::add_sequence(int64_t seq_id) { call_packed(add_, {cache_, int_arg(seq_id)}); }

void KvCacheModel::remove_sequence(int64_t seq_id) { call_packed(remove_, {cache_, int_arg(seq_id)}); }

graphrt::NDArray KvCacheModel::forward(const graphrt::PackedFunc& fn, int64_t seq_id, const int32_t* ids, int64_t n) {
  graphrt::NDArray input = graphrt::NDArray::empty({1, n}, ids_dtype_, DLDevice{kDLCPU, 0});
  if (ids_dtype_.bits == 32) {
    input.copy_from_bytes(ids, static_cast<size_t>(n) * sizeof(int32_t));
  } else {
    std::vector<int64_t> wide(ids, ids + n);
    input.copy_from_bytes(wide.data(), wide.size() * sizeof(int64_t));
  }
  call_packed(begin_, {cache_, shape(seq_id), shape(n)});
  RetValue in;
  in.set_ndarray(input);
  const RetValue result = call_packed(fn, {in, cache_});
  cache_ = tuple_item(result, 1);
  call_packed(end_, {cache_});
  return tuple_item(result, 0).as_ndarray();
}

int32_t KvCacheModel::prefill(int64_t seq_id, const std::vector<int32_t>& ids) {
  graphrt::NDArray logits;
  const int64_t total = static_cast<int64_t>(ids.size());
  for (int64_t at = 0; at < total; at += config_.prefill_chunk_size) {
    const int64_t n = std::min(config_.prefill_chunk_size, total - at);
    logits = forward(prefill_, seq_id, ids.data() + at, n);
  }
  return greedy_token(logits);
}

int32_t KvCacheModel::decode(int64_t seq_id, int32_t token) { return greedy_token(forward(decode_, seq_id, &token, 1)); }

}  // namespace graphrt_serve
