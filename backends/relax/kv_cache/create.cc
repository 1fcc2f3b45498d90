#include "backends/relax/kv_cache/create.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

namespace graphrt {
namespace relax {
namespace kv {

namespace {

// The cache's pages over all layers, and its scratch, may hold at most this
// many bytes, and its page table this many pages (a hostile config must not
// reach the allocator with an absurd size; MLC's caches hold thousands of pages).
constexpr int64_t kMaxCacheBytes = int64_t{1} << 40;
constexpr int64_t kMaxPages = int64_t{1} << 24;

// The product of `factors` (each in 1..2^31) when it is at most kMaxCacheBytes, else -1.
int64_t bounded_product(std::initializer_list<int64_t> factors) {
  int64_t total = 1;
  for (int64_t f : factors) {
    if (total > kMaxCacheBytes / f) return -1;
    total *= f;
  }
  return total;
}

Error arg_error(const BuiltinArgs& args, int i, const std::string& what, const std::string& message,
                ErrorKind kind = ErrorKind::kInvalidArgument) {
  return args.error(what + " (argument " + std::to_string(i) + ") " + message, kind).with("argument", std::to_string(i));
}

int64_t positive(const BuiltinArgs& args, int i, const char* what) {
  const int64_t v = args.as_int(i, what);
  if (v <= 0 || v > (int64_t{1} << 31)) throw arg_error(args, i, what, "must be in 1..2^31, not " + std::to_string(v));
  return v;
}

double number(const BuiltinArgs& args, int i, const char* what) {
  const Value& v = args.at(i);
  if (const double* d = std::get_if<double>(&v)) return *d;
  if (const int64_t* n = std::get_if<int64_t>(&v)) return static_cast<double>(*n);
  throw args.type_error(i, what, "a number");
}

// A kernel argument: the library's function, passed as a function value.
PackedFunc function_value(const BuiltinArgs& args, int i, const Value& v, const char* what) {
  if (const PackedFunc* f = std::get_if<PackedFunc>(&v)) return *f;
  if (const auto* c = std::get_if<Ref<ClosureObj>>(&v))
    if ((*c)->function == -1 && (*c)->bound.empty()) return (*c)->packed;
  throw arg_error(args, i, what, std::string("must be a kernel function, not ") + value_kind_name(v),
                  ErrorKind::kTypeMismatch);
}

PackedFunc function_arg(const BuiltinArgs& args, int i, const char* what) {
  return function_value(args, i, args.at(i), what);
}

// A (backend, kernel) tuple; an empty tuple (no such kernel) gives null.
PackedFunc backend_kernel(const BuiltinArgs& args, int i, const char* what) {
  const std::vector<Value>& items = args.as_tuple(i, what)->items;
  if (items.empty()) return PackedFunc();
  const StringRef* backend = std::get_if<StringRef>(&items[0]);
  if (!backend || items.size() < 2)
    throw arg_error(args, i, what, "must be a (backend name, kernel) tuple", ErrorKind::kTypeMismatch);
  if (**backend != "tirx" && **backend != "tir")
    throw arg_error(args, i, what, "uses the " + quote_untrusted(**backend) + " attention backend; graphrt runs TIR kernels only",
                    ErrorKind::kUnsupported);
  return function_value(args, i, items[1], what);
}

PackedFunc required_kernel(const BuiltinArgs& args, int i, const char* what) {
  PackedFunc f = backend_kernel(args, i, what);
  if (!f) throw arg_error(args, i, what, "is empty; the cache needs this kernel");
  return f;
}

void read_sizes(const BuiltinArgs& args, CacheConfig* c) {
  const std::vector<int64_t>& cfg = args.as_shape(0, "cache config").dims;
  if (cfg.size() != 5)
    throw arg_error(args, 0, "cache config", "must have 5 values, not " + std::to_string(cfg.size()));
  for (int k = 0; k < 4; ++k)
    if (cfg[k] <= 0 || cfg[k] > (int64_t{1} << 31))
      throw arg_error(args, 0, "cache config", "value " + std::to_string(k) + " must be in 1..2^31, not " +
                                                   std::to_string(cfg[k]));
  if (cfg[4] != 0)
    throw arg_error(args, 0, "cache config", "asks for sliding-window support, which graphrt's cache does not have",
                    ErrorKind::kUnsupported);
  c->max_batch_size = cfg[0];
  c->max_total_seq_len = cfg[1];
  c->prefill_chunk_size = cfg[2];
  c->page_size = cfg[3];
  c->num_pages = (cfg[1] + cfg[3] - 1) / cfg[3] + 1;
}

void read_model(const BuiltinArgs& args, CacheConfig* c) {
  c->num_qo_heads = positive(args, 2, "num_qo_heads");
  c->num_kv_heads = positive(args, 3, "num_kv_heads");
  c->qk_head_dim = positive(args, 4, "qk_head_dim");
  c->v_head_dim = positive(args, 5, "v_head_dim");
  if (c->num_qo_heads % c->num_kv_heads != 0)
    throw arg_error(args, 3, "num_kv_heads", "must divide num_qo_heads " + std::to_string(c->num_qo_heads));
  if (c->qk_head_dim != c->v_head_dim)
    throw arg_error(args, 5, "v_head_dim", "differs from qk_head_dim (MLA), which graphrt's cache does not have",
                    ErrorKind::kUnsupported);
}

void read_layers(const BuiltinArgs& args, CacheConfig* c) {
  const std::vector<int64_t>& kinds = args.as_shape(6, "attention kinds").dims;
  for (int64_t k : kinds)
    if (k != 0)
      throw arg_error(args, 6, "attention kinds", "name kind " + std::to_string(k) +
                                                      "; graphrt's cache has multi-head attention (kind 0) only",
                      ErrorKind::kUnsupported);
  const std::vector<int64_t>& part = args.as_shape(1, "layer partition").dims;
  if (part.size() != 2 || part[0] < 0 || part[1] <= part[0] || part[1] > static_cast<int64_t>(kinds.size()))
    throw arg_error(args, 1, "layer partition",
                    "must be (begin, end) with 0 <= begin < end <= " + std::to_string(kinds.size()) +
                        " (one pipeline stage)");
  c->layer_begin = part[0];
  c->num_layers = part[1] - part[0];
}

void read_rope(const BuiltinArgs& args, CacheConfig* c) {
  if (args.as_int(7, "enable_kv_transfer") != 0)
    throw arg_error(args, 7, "enable_kv_transfer", "asks for KV transfer (disaggregation), which graphrt does not have",
                    ErrorKind::kUnsupported);
  const int64_t mode = args.as_int(8, "rope_mode");
  if (mode < 0 || mode > 2) throw arg_error(args, 8, "rope_mode", "must be 0, 1 or 2, not " + std::to_string(mode));
  c->rope_mode = static_cast<RopeMode>(mode);
  c->rope_scale = number(args, 9, "rope_scale");
  c->rope_theta = number(args, 10, "rope_theta");
  if (std::holds_alternative<NDArray>(args.at(11)))
    throw arg_error(args, 11, "rope_ext_factors", "are given (long RoPE scaling), which graphrt's cache does not have",
                    ErrorKind::kUnsupported);
  const NDArray init = args.as_tensor(12, "init");
  c->dtype = init.dtype();
  c->device = init.device();
}

void check_size(const BuiltinArgs& args, const CacheConfig& c) {
  if (c.num_pages > kMaxPages)
    throw arg_error(args, 0, "cache config", "asks for " + std::to_string(c.num_pages) + " pages; graphrt's cache holds " +
                                                 std::to_string(kMaxPages) + " at most",
                    ErrorKind::kResourceExhausted);
  const int64_t bytes = std::max(4, (c.dtype.bits * c.dtype.lanes + 7) / 8);
  const int64_t pages = bounded_product({bytes, c.num_layers, c.num_pages, 2, c.num_kv_heads, c.page_size, c.qk_head_dim});
  const int64_t scratch = bounded_product({bytes, c.prefill_chunk_size, c.num_qo_heads + 2 * c.num_kv_heads, c.qk_head_dim, 3});
  if (pages < 0 || scratch < 0)
    throw args.error("the cache's pages and scratch would take more than 2^40 bytes", ErrorKind::kResourceExhausted);
}

CacheKernels read_kernels(const BuiltinArgs& args) {
  CacheKernels k;
  k.transpose_append = function_arg(args, 13, "f_transpose_append");
  k.prefill_ragged = required_kernel(args, 15, "f_attention_prefill_ragged");
  k.prefill_paged = required_kernel(args, 16, "f_attention_prefill");
  k.decode_paged = required_kernel(args, 17, "f_attention_decode");
  const std::vector<Value>& merge = args.as_tuple(23, "f_merge_inplace")->items;
  if (merge.empty()) throw arg_error(args, 23, "f_merge_inplace", "is empty; the cache needs the merge kernel");
  k.merge_inplace = function_value(args, 23, merge[0], "f_merge_inplace");
  if (merge.size() > 1) k.merge_general = function_value(args, 23, merge[1], "f_merge_inplace");
  k.split_rotary = function_arg(args, 24, "f_split_rotary");
  k.copy_single_page = function_arg(args, 25, "f_copy_single_page");
  k.debug_get_kv = function_arg(args, 26, "f_debug_get_kv");
  return k;
}

}  // namespace

Ref<PagedKVCache> create_paged_kv_cache(const Runtime& runtime, const BuiltinArgs& args) {
  if (args.size() != 28 && args.size() != 29)
    throw args.error("takes 28 arguments (TVM v0.26's TIRPagedKVCache); " + std::to_string(args.size()) + " given");
  CacheConfig c;
  read_sizes(args, &c);
  read_model(args, &c);
  read_layers(args, &c);
  read_rope(args, &c);
  check_size(args, c);
  return make_ref<PagedKVCache>(c, read_kernels(args), DeviceApis(runtime, {c.device}));
}

}  // namespace kv
}  // namespace relax
}  // namespace graphrt
