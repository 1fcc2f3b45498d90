#include "backends/relax/kv_cache/builtins.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends/relax/interpreter.h"
#include "backends/relax/kv_cache/create.h"
#include "backends/relax/kv_cache/paged_kv_cache.h"
#include "backends/relax/packed_convention.h"

namespace graphrt {
namespace relax {

namespace {

using kv::PagedKVCache;

// A builtin of this family: it needs no VM, only the runtime that allocates for
// a new cache (the VM's executable's, or the one the global function is
// registered in), so the same body serves the VM's native calls and the global
// function.
using KvBody = void (*)(const Runtime& runtime, const BuiltinArgs& args, Value* ret);
// A builtin on an existing cache, which allocates and copies through the APIs it was made with.
using CacheBody = void (*)(const BuiltinArgs& args, Value* ret);

Error arg_error(const BuiltinArgs& args, int i, const std::string& what, const std::string& message,
                ErrorKind kind = ErrorKind::kInvalidArgument) {
  return args.error(what + " (argument " + std::to_string(i) + ") " + message, kind).with("argument", std::to_string(i));
}

PagedKVCache& cache_arg(const BuiltinArgs& args) {
  const Value& v = args.at(0);
  if (const auto* s = std::get_if<Ref<StateObj>>(&v))
    if (auto* cache = dynamic_cast<PagedKVCache*>(s->get())) return *cache;
  throw args.type_error(0, "the KV cache", "a paged KV cache (vm.builtin.paged_attention_kv_cache_create's result)");
}

int64_t known_seq(const BuiltinArgs& args, const PagedKVCache& cache, int i, const char* what) {
  const int64_t id = args.as_int(i, what);
  if (!cache.table().has(id))
    throw arg_error(args, i, what, "is " + std::to_string(id) + ", a sequence not in the KV cache", ErrorKind::kNotFound);
  return id;
}

int64_t new_seq(const BuiltinArgs& args, const PagedKVCache& cache, int i, const char* what) {
  const int64_t id = args.as_int(i, what);
  if (cache.table().has(id))
    throw arg_error(args, i, what, "is " + std::to_string(id) + ", a sequence already in the KV cache");
  if (id < 0) throw arg_error(args, i, what, "is " + std::to_string(id) + "; sequence ids are not negative");
  return id;
}

double number(const BuiltinArgs& args, int i, const char* what) {
  const Value& v = args.at(i);
  if (const double* d = std::get_if<double>(&v)) return *d;
  if (const int64_t* n = std::get_if<int64_t>(&v)) return static_cast<double>(*n);
  throw args.type_error(i, what, "a number");
}

// The model's layer id, in the cache's range.
int64_t layer_arg(const BuiltinArgs& args, const PagedKVCache& cache, int i) {
  const int64_t layer = args.as_int(i, "layer_id");
  const int64_t begin = cache.config().layer_begin;
  const int64_t end = begin + cache.config().num_layers;
  if (layer < begin || layer >= end)
    throw arg_error(args, i, "layer_id", "is " + std::to_string(layer) + ", outside the cache's layers " +
                                             std::to_string(begin) + ".." + std::to_string(end - 1),
                    ErrorKind::kOutOfRange);
  return layer;
}

// A tensor of the given shape (-1: any) and dtype on the cache's device.
NDArray tensor_arg(const BuiltinArgs& args, const PagedKVCache& cache, int i, const char* what,
                   std::initializer_list<int64_t> shape, DLDataType dtype) {
  const NDArray t = args.as_tensor(i, what);
  bool ok = t.shape().size() == shape.size();
  for (size_t d = 0; ok && d < shape.size(); ++d) ok = shape.begin()[d] < 0 || t.shape()[d] == shape.begin()[d];
  if (!ok)
    throw arg_error(args, i, what,
                    "has shape " + shape_to_string(t.shape()) + ", expected " + shape_to_string(std::vector<int64_t>(shape)));
  if (t.dtype() != dtype)
    throw arg_error(args, i, what, "is " + dtype_to_string(t.dtype()) + ", expected " + dtype_to_string(dtype),
                    ErrorKind::kTypeMismatch);
  if (t.device().device_type != cache.config().device.device_type || t.device().device_id != cache.config().device.device_id)
    throw arg_error(args, i, what, "is on another device than the KV cache", ErrorKind::kUnsupported);
  return t;
}

// Runs a call into the cache: its own errors (capacity, state, a kernel's
// failure) name the builtin too.
template <typename F>
void guarded(const BuiltinArgs& args, F&& body) {
  try {
    body();
  } catch (const Error& e) {
    Error out = args.error(e.message(), e.kind());
    for (const auto& pair : e.context()) out.with(pair.first, pair.second);
    throw out;
  }
}

void create(const Runtime& runtime, const BuiltinArgs& args, Value* ret) {
  Ref<PagedKVCache> cache = kv::create_paged_kv_cache(runtime, args);
  *ret = Ref<StateObj>(cache.get());
}

void clear(const BuiltinArgs& args, Value*) {
  args.require(1, "(kv_cache)");
  cache_arg(args).clear();
}

void add_sequence(const BuiltinArgs& args, Value*) {
  args.require(2, "(kv_cache, seq_id)");
  PagedKVCache& cache = cache_arg(args);
  const int64_t id = new_seq(args, cache, 1, "seq_id");
  guarded(args, [&] { cache.add_sequence(id); });
}

void remove_sequence(const BuiltinArgs& args, Value*) {
  args.require(2, "(kv_cache, seq_id)");
  PagedKVCache& cache = cache_arg(args);
  const int64_t id = known_seq(args, cache, 1, "seq_id");
  guarded(args, [&] { cache.remove_sequence(id); });
}

void fork_sequence(const BuiltinArgs& args, Value*) {
  args.require(4, "(kv_cache, parent_seq_id, child_seq_id, fork_pos)");
  PagedKVCache& cache = cache_arg(args);
  const int64_t parent = known_seq(args, cache, 1, "parent_seq_id");
  const int64_t child = new_seq(args, cache, 2, "child_seq_id");
  const int64_t pos = args.as_int(3, "fork_pos");
  const int64_t length = cache.table().sequence(parent).length;
  if (pos < -1 || pos > length)
    throw arg_error(args, 3, "fork_pos", "is " + std::to_string(pos) + "; the parent has " + std::to_string(length) +
                                             " tokens (-1 forks at its end)",
                    ErrorKind::kOutOfRange);
  guarded(args, [&] { cache.fork_sequence(parent, child, pos); });
}

void popn(const BuiltinArgs& args, Value*) {
  args.require(3, "(kv_cache, seq_id, n)");
  PagedKVCache& cache = cache_arg(args);
  const int64_t id = known_seq(args, cache, 1, "seq_id");
  const int64_t n = args.as_int(2, "n");
  const int64_t length = cache.table().sequence(id).length;
  if (n < 0 || n > length)
    throw arg_error(args, 2, "n", "is " + std::to_string(n) + "; the sequence has " + std::to_string(length) + " tokens",
                    ErrorKind::kOutOfRange);
  guarded(args, [&] { cache.popn(id, n); });
}

void begin_forward(const BuiltinArgs& args, Value*) {
  args.require(3, "(kv_cache, seq_ids, append_lengths[, token_tree_parent_ptr])");
  PagedKVCache& cache = cache_arg(args);
  const std::vector<int64_t>& ids = args.as_shape(1, "seq_ids").dims;
  const std::vector<int64_t>& lengths = args.as_shape(2, "append_lengths").dims;
  if (ids.empty()) throw arg_error(args, 1, "seq_ids", "is empty");
  if (lengths.size() != ids.size())
    throw arg_error(args, 2, "append_lengths", "has " + std::to_string(lengths.size()) + " values for " +
                                                   std::to_string(ids.size()) + " sequences");
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (!cache.table().has(id))
      throw arg_error(args, 1, "seq_ids", "name " + std::to_string(id) + ", a sequence not in the KV cache",
                      ErrorKind::kNotFound);
    // A batch is at most the cache's max sequences: the pairs cost less than a set's nodes.
    if (std::find(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(i), id) != ids.begin() + static_cast<std::ptrdiff_t>(i))
      throw arg_error(args, 1, "seq_ids", "name sequence " + std::to_string(id) + " twice");
  }
  for (int64_t n : lengths)
    if (n <= 0) throw arg_error(args, 2, "append_lengths", "has " + std::to_string(n) + "; each must be at least 1");
  if (args.size() > 3 && !std::holds_alternative<std::monostate>(args.at(3)))
    throw arg_error(args, 3, "token_tree_parent_ptr", "is given; graphrt's cache does not do tree attention",
                    ErrorKind::kUnsupported);
  guarded(args, [&] { cache.begin_forward(ids, lengths); });
}

void end_forward(const BuiltinArgs& args, Value*) {
  args.require(1, "(kv_cache)");
  cache_arg(args).end_forward();
}

void empty(const BuiltinArgs& args, Value* ret) {
  args.require(1, "(kv_cache)");
  *ret = int64_t{cache_arg(args).table().empty() ? 1 : 0};
}

void num_available_pages(const BuiltinArgs& args, Value* ret) {
  args.require(1, "(kv_cache)");
  *ret = cache_arg(args).table().free_pages();
}

void total_sequence_length(const BuiltinArgs& args, Value* ret) {
  args.require(1, "(kv_cache)");
  *ret = cache_arg(args).table().total_length();
}

void query_positions(const BuiltinArgs& args, Value* ret) {
  args.require(1, "(kv_cache)");
  PagedKVCache& cache = cache_arg(args);
  guarded(args, [&] { *ret = cache.query_positions(); });
}

// The forward pass's query rows, or an error naming the builtin.
int64_t rows(const BuiltinArgs& args, const PagedKVCache& cache) {
  int64_t n = 0;
  guarded(args, [&] { n = cache.plan().total_append; });
  return n;
}

void attention_with_fused_qkv(const BuiltinArgs& args, Value*) {
  args.require(5, "(kv_cache, layer_id, sm_scale, qkv, out)");
  PagedKVCache& cache = cache_arg(args);
  const kv::CacheConfig& c = cache.config();
  const int64_t layer = layer_arg(args, cache, 1);
  const double sm_scale = number(args, 2, "sm_scale");
  const int64_t n = rows(args, cache);
  const NDArray qkv = tensor_arg(args, cache, 3, "qkv", {-1, c.num_qo_heads + 2 * c.num_kv_heads, c.qk_head_dim}, c.dtype);
  const NDArray out = tensor_arg(args, cache, 4, "out", {qkv.shape()[0], c.num_qo_heads, c.qk_head_dim}, c.dtype);
  if (qkv.shape()[0] < n)
    throw arg_error(args, 3, "qkv", "has " + std::to_string(qkv.shape()[0]) + " rows; the forward pass appends " +
                                        std::to_string(n) + " tokens");
  guarded(args, [&] { cache.attention_with_fused_qkv(layer, qkv, out, sm_scale); });
}

void self_attention(const BuiltinArgs& args, Value*) {
  args.require(8, "(kv_cache, layer_id, sm_scale, q, k, v, out, lse)");
  PagedKVCache& cache = cache_arg(args);
  const kv::CacheConfig& c = cache.config();
  layer_arg(args, cache, 1);
  const double sm_scale = number(args, 2, "sm_scale");
  const int64_t n = rows(args, cache);
  const NDArray q = tensor_arg(args, cache, 3, "q", {n, c.num_qo_heads, c.qk_head_dim}, c.dtype);
  const NDArray k = tensor_arg(args, cache, 4, "k", {n, c.num_kv_heads, c.qk_head_dim}, c.dtype);
  const NDArray v = tensor_arg(args, cache, 5, "v", {n, c.num_kv_heads, c.v_head_dim}, c.dtype);
  const NDArray o = tensor_arg(args, cache, 6, "out", {n, c.num_qo_heads, c.v_head_dim}, c.dtype);
  const NDArray lse = tensor_arg(args, cache, 7, "lse", {n, c.num_qo_heads}, DLDataType{kDLFloat, 32, 1});
  guarded(args, [&] { cache.self_attention(q, k, v, o, lse, sm_scale); });
}

void cross_attention(const BuiltinArgs& args, Value*) {
  args.require(6, "(kv_cache, layer_id, sm_scale, q, out, lse)");
  PagedKVCache& cache = cache_arg(args);
  const kv::CacheConfig& c = cache.config();
  const int64_t layer = layer_arg(args, cache, 1);
  const double sm_scale = number(args, 2, "sm_scale");
  const int64_t n = rows(args, cache);
  const NDArray q = tensor_arg(args, cache, 3, "q", {n, c.num_qo_heads, c.qk_head_dim}, c.dtype);
  const NDArray o = tensor_arg(args, cache, 4, "out", {n, c.num_qo_heads, c.v_head_dim}, c.dtype);
  const NDArray lse = tensor_arg(args, cache, 5, "lse", {n, c.num_qo_heads}, DLDataType{kDLFloat, 32, 1});
  guarded(args, [&] { cache.cross_attention(layer, q, o, lse, sm_scale); });
}

void merge_attn_output(const BuiltinArgs& args, Value* ret) {
  args.require(5, "(kv_cache, o_self_attn, lse_self_attn, o_cross_attn, lse_cross_attn)");
  PagedKVCache& cache = cache_arg(args);
  const NDArray o = args.as_tensor(1, "o_self_attn");
  const NDArray lse = args.as_tensor(2, "lse_self_attn");
  const NDArray o2 = args.as_tensor(3, "o_cross_attn");
  const NDArray lse2 = args.as_tensor(4, "lse_cross_attn");
  if (!cache.has_general_merge())
    throw args.error("the cache was created without the general merge kernel (f_merge_inplace has one entry)",
                     ErrorKind::kUnsupported);
  guarded(args, [&] { cache.merge_attn_output(o, lse, o2, lse2); });
  *ret = make_tuple({o, lse});
}

void debug_get_kv(const BuiltinArgs& args, Value*) {
  args.require(6, "(kv_cache, seq_id, start_pos, end_pos, k_data, v_data)");
  PagedKVCache& cache = cache_arg(args);
  const kv::CacheConfig& c = cache.config();
  const int64_t id = known_seq(args, cache, 1, "seq_id");
  const int64_t start = args.as_int(2, "start_pos");
  const int64_t end = args.as_int(3, "end_pos");
  const int64_t length = cache.table().sequence(id).length;
  if (start < 0 || start >= end || end > length)
    throw arg_error(args, 3, "end_pos", "and start_pos must satisfy 0 <= start_pos < end_pos <= " +
                                            std::to_string(length) + " (the sequence's length); they are " +
                                            std::to_string(start) + " and " + std::to_string(end),
                    ErrorKind::kOutOfRange);
  const NDArray k = tensor_arg(args, cache, 4, "k_data", {c.num_layers, end - start, c.num_kv_heads, c.qk_head_dim}, c.dtype);
  const NDArray v = tensor_arg(args, cache, 5, "v_data", {c.num_layers, end - start, c.num_kv_heads, c.qk_head_dim}, c.dtype);
  guarded(args, [&] { cache.debug_get_kv(id, start, end, k, v); });
}

void unsupported(const BuiltinArgs& args, Value*) {
  throw args.error("is not supported by graphrt's KV cache (no sliding windows, token trees or KV transfer)",
                   ErrorKind::kUnsupported);
}

template <CacheBody F>
void on_cache(const Runtime&, const BuiltinArgs& args, Value* ret) {
  F(args, ret);
}

template <KvBody F>
void native(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  F(vm.runtime(), args, ret);
}

struct KvEntry {
  const char* name;
  KvBody body;
  BuiltinFn native;
};

#define KV_CREATE_ENTRY(name, fn) {name, fn, native<fn>}
#define KV_ENTRY(name, fn) {name, on_cache<fn>, native<on_cache<fn>>}

const KvEntry kKvEntries[] = {
    KV_CREATE_ENTRY("vm.builtin.paged_attention_kv_cache_create", create),
    KV_ENTRY("vm.builtin.kv_state_clear", clear),
    KV_ENTRY("vm.builtin.kv_state_add_sequence", add_sequence),
    KV_ENTRY("vm.builtin.kv_state_remove_sequence", remove_sequence),
    KV_ENTRY("vm.builtin.kv_state_fork_sequence", fork_sequence),
    KV_ENTRY("vm.builtin.kv_state_popn", popn),
    KV_ENTRY("vm.builtin.kv_state_begin_forward", begin_forward),
    KV_ENTRY("vm.builtin.kv_state_end_forward", end_forward),
    KV_ENTRY("vm.builtin.attention_kv_cache_empty", empty),
    KV_ENTRY("vm.builtin.attention_kv_cache_get_num_available_pages", num_available_pages),
    KV_ENTRY("vm.builtin.attention_kv_cache_get_total_sequence_length", total_sequence_length),
    KV_ENTRY("vm.builtin.attention_kv_cache_get_query_positions", query_positions),
    KV_ENTRY("vm.builtin.attention_kv_cache_attention_with_fused_qkv", attention_with_fused_qkv),
    KV_ENTRY("vm.builtin.attention_kv_cache_self_attention", self_attention),
    KV_ENTRY("vm.builtin.attention_kv_cache_cross_attention", cross_attention),
    KV_ENTRY("vm.builtin.attention_kv_cache_merge_attn_output_inplace", merge_attn_output),
    KV_ENTRY("vm.builtin.attention_kv_cache_debug_get_kv", debug_get_kv),
    KV_ENTRY("vm.builtin.attention_kv_cache_enable_sliding_window_for_seq", unsupported),
    KV_ENTRY("vm.builtin.attention_kv_cache_commit_accepted_token_tree_nodes", unsupported),
    KV_ENTRY("vm.builtin.kv_cache_disagg_prepare_recv", unsupported),
    KV_ENTRY("vm.builtin.kv_cache_disagg_mark_send", unsupported),
};

#undef KV_ENTRY
#undef KV_CREATE_ENTRY

constexpr size_t kKvCount = sizeof(kKvEntries) / sizeof(kKvEntries[0]);

const BuiltinEntry* native_entries() {
  static const std::vector<BuiltinEntry> entries = [] {
    std::vector<BuiltinEntry> out;
    for (const KvEntry& e : kKvEntries) out.push_back({e.name, e.native});
    return out;
  }();
  return entries.data();
}

// The builtin as a global function of `runtime` (which outlives its functions): packed
// arguments become register values.
PackedFunc global_function(const KvEntry& e, const Runtime& runtime) {
  const char* name = e.name;
  const KvBody body = e.body;
  const Runtime* owner = &runtime;
  return make_function(
      [name, body, owner](const TVMArgs& targs, RetValue* ret) {
        // On the stack for the usual few arguments (a decode step's begin/end_forward).
        constexpr int kInline = 8;
        Value inline_values[kInline];
        const Value* inline_argv[kInline];
        std::vector<Value> wide_values;
        std::vector<const Value*> wide_argv;
        const int n = targs.size();
        Value* values = inline_values;
        const Value** argv = inline_argv;
        if (n > kInline) {
          wide_values.resize(static_cast<size_t>(n));
          wide_argv.resize(static_cast<size_t>(n));
          values = wide_values.data();
          argv = wide_argv.data();
        }
        for (int i = 0; i < n; ++i) {
          values[i] = value_from_arg(targs, i);
          argv[i] = &values[i];
        }
        Value out;
        body(*owner, BuiltinArgs(name, argv, n), &out);
        value_to_ret(out, ret);
      },
      name);
}

}  // namespace

const BuiltinEntry* kv_cache_builtins(size_t* count) {
  *count = kKvCount;
  return native_entries();
}

void register_kv_cache_functions(Runtime& runtime) {
  for (const KvEntry& e : kKvEntries) runtime.set_function(e.name, global_function(e, runtime));
}

}  // namespace relax
}  // namespace graphrt
