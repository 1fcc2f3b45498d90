#include "backends/relax/kv_cache/paged_kv_cache.h"

#include <algorithm>
#include <string>
#include <utility>

#include "backends/relax/packed_convention.h"

namespace graphrt {
namespace relax {
namespace kv {

namespace {

constexpr DLDataType kInt32{kDLInt, 32, 1};
constexpr DLDataType kFloat32{kDLFloat, 32, 1};

// Calls one of the cache's kernels; a failure names it. The arguments stay on the stack.
void invoke(const PackedFunc& f, const char* role, std::initializer_list<Value> args) {
  constexpr size_t kMax = 16;
  const Value* argv[kMax];
  if (args.size() > kMax) throw Error(ErrorKind::kInternal, std::string("KV cache kernel ") + role + ": too many arguments");
  size_t n = 0;
  for (const Value& v : args) argv[n++] = &v;
  Value ret;
  try {
    call_packed(f, argv, static_cast<int>(n), &ret);
  } catch (Error& e) {
    throw e.with("KV cache kernel", role);
  }
}

}  // namespace

PagedKVCache::PagedKVCache(const CacheConfig& config, CacheKernels kernels, DeviceApis apis)
    : config_(config),
      kernels_(std::move(kernels)),
      apis_(std::move(apis)),
      table_(config.page_size, config.num_pages) {
  const CacheConfig& c = config_;
  for (int64_t l = 0; l < c.num_layers; ++l)
    pages_.push_back(apis_.empty({c.num_pages, 2, c.num_kv_heads, c.page_size, c.qk_head_dim}, c.dtype, c.device));
  temp_q_ = apis_.empty({c.prefill_chunk_size, c.num_qo_heads, c.qk_head_dim}, c.dtype, c.device);
  temp_k_ = apis_.empty({c.prefill_chunk_size, c.num_kv_heads, c.qk_head_dim}, c.dtype, c.device);
  temp_v_ = apis_.empty({c.prefill_chunk_size, c.num_kv_heads, c.v_head_dim}, c.dtype, c.device);
  temp_out_ = apis_.empty({c.prefill_chunk_size, c.num_qo_heads, c.v_head_dim}, c.dtype, c.device);
  temp_lse_ = apis_.empty({c.prefill_chunk_size, c.num_qo_heads}, kFloat32, c.device);
  merged_lse_ = apis_.empty({c.prefill_chunk_size, c.num_qo_heads}, kFloat32, c.device);
}

// `values` in *slot: on the host, the tensor already there when it has their length and nobody
// else holds it (a decode step's tables keep their lengths from step to step), else a new one. On
// a device always a new one: a kernel of the step before may still be reading the old one (the
// forward pass's tables go up together, stage_plan; this serves debug_get_kv's positions).
void PagedKVCache::refill_int32(NDArray* slot, const std::vector<int32_t>& values) const {
  const DLDevice device = config_.device;
  const int64_t n = static_cast<int64_t>(values.size());
  const bool host = device.device_type == kDLCPU && slot->defined() && slot->use_count() == 1 &&
                    slot->device().device_type == kDLCPU;
  if (host && slot->shape()[0] != n) {
    // Another length on the host: in place when the table's memory holds it (nobody else sees
    // the array), else a new one with room to grow.
    int64_t capacity = slot->shape()[0];
    for (const NDArray& m : table_memory_)
      if (m->data == (*slot)->data) capacity = m.shape()[0];
    if (n <= capacity) {
      NDArrayNode* node = NDArrayNode::from_handle(slot->handle());
      node->shape[0] = n;
      node->dl.shape = node->shape.data();
    } else {
      const int64_t room = std::max<int64_t>(n * 2, 16);
      const NDArray memory = apis_.empty({room}, kInt32, device);
      *slot = memory.view({n}, kInt32);
      // Memory no table views any more goes (the list holds each table's memory, so no
      // address in it can be another array's).
      table_memory_.erase(std::remove_if(table_memory_.begin(), table_memory_.end(),
                                         [](const NDArray& m) {
                                           return NDArrayNode::from_handle(m.handle())->storage.use_count() == 1;
                                         }),
                          table_memory_.end());
      table_memory_.push_back(memory);
    }
  } else if (!host) {
    *slot = apis_.empty({n}, kInt32, device);
  }
  if (n) apis_.copy_from_bytes(*slot, values.data(), values.size() * sizeof(int32_t));
}

void PagedKVCache::clear() {
  table_.clear();
  forward_active_ = false;
}

void PagedKVCache::add_sequence(int64_t seq_id) {
  forward_active_ = false;
  table_.add(seq_id);
}

void PagedKVCache::remove_sequence(int64_t seq_id) {
  forward_active_ = false;
  table_.remove(seq_id);
}

void PagedKVCache::copy_page(int32_t src, int32_t dst, int64_t length) {
  for (const NDArray& pages : pages_)
    invoke(kernels_.copy_single_page, "copy_single_page", {pages, int64_t{src}, int64_t{dst}, length});
}

void PagedKVCache::fork_sequence(int64_t parent_id, int64_t child_id, int64_t fork_pos) {
  forward_active_ = false;
  table_.fork(parent_id, child_id, fork_pos, [this](int32_t s, int32_t d, int64_t n) { copy_page(s, d, n); });
}

void PagedKVCache::popn(int64_t seq_id, int64_t n) {
  forward_active_ = false;
  table_.pop(seq_id, n, [this](int32_t s, int32_t d, int64_t len) { copy_page(s, d, len); });
}

void PagedKVCache::begin_forward(const std::vector<int64_t>& seq_ids, const std::vector<int64_t>& append_lengths) {
  forward_active_ = false;
  int64_t total = 0;
  int64_t pages = 0;
  for (size_t i = 0; i < seq_ids.size(); ++i) {
    const Sequence& seq = table_.sequence(seq_ids[i]);
    if (!table_.appendable(seq))
      throw Error(ErrorKind::kFailedPrecondition,
                  "sequence " + std::to_string(seq_ids[i]) +
                      " ends in a block that a forked sequence shares, so it cannot take new tokens");
    total += append_lengths[i];
    pages += table_.pages_needed(seq, append_lengths[i]);
  }
  if (total > config_.prefill_chunk_size)
    throw Error(ErrorKind::kResourceExhausted, "the batch appends " + std::to_string(total) +
                                                   " tokens, more than the cache's prefill chunk size " +
                                                   std::to_string(config_.prefill_chunk_size));
  if (pages > table_.free_pages())
    throw Error(ErrorKind::kResourceExhausted, "the batch needs " + std::to_string(pages) + " new pages, and the cache has " +
                                                   std::to_string(table_.free_pages()) + " free (capacity " +
                                                   std::to_string(config_.max_total_seq_len) + " tokens)");
  plan_forward(table_, seq_ids, append_lengths, &plan_, &plan_scratch_);
  upload_plan();
  forward_active_ = true;
}

void PagedKVCache::upload_plan() {
  if (config_.device.device_type != kDLCPU) {
    stage_plan();
    return;
  }
  refill_int32(&append_indptr_, plan_.append_indptr);
  refill_int32(&k_ragged_rope_pos_offset_, plan_.k_ragged_rope_pos_offset);
  refill_int32(&q_rope_position_map_, plan_.q_rope_position_map);
  refill_int32(&append_position_map_, plan_.append_position_map);
  const size_t depths = plan_.depths.size();
  for (std::vector<NDArray>* tables : {&qo_indptr_, &page_indptr_, &page_indices_, &last_page_len_, &k_rope_pos_offset_})
    tables->resize(depths);
  for (size_t d = 0; d < depths; ++d) {
    const DepthTables& t = plan_.depths[d];
    refill_int32(&qo_indptr_[d], t.qo_indptr);
    refill_int32(&page_indptr_[d], t.page_indptr);
    refill_int32(&page_indices_[d], t.page_indices);
    refill_int32(&last_page_len_[d], t.last_page_len);
    refill_int32(&k_rope_pos_offset_[d], t.k_rope_pos_offset);
  }
}

// A device's tables go up in one copy, as TVM's cache does where the device can address into a
// buffer (its cached aux-data manager): the tables are packed into one host buffer, copied into
// one new device buffer (a kernel of the step before may still read the last one), and each
// table is a view of it. Each view starts at a multiple of kStagingAlignment, which covers what
// the APIs require of a buffer binding's start: Vulkan's minStorageBufferOffsetAlignment (at
// most 256 by the spec) and OpenCL's CL_DEVICE_MEM_BASE_ADDR_ALIGN for sub-buffers (128-512
// bytes on the drivers met: PoCL, Intel, Adreno, Mali 128, AMD 256, NVIDIA 512).
void PagedKVCache::stage_plan() {
  constexpr size_t kStagingAlignment = 512;
  const size_t depths = plan_.depths.size();
  for (std::vector<NDArray>* tables : {&qo_indptr_, &page_indptr_, &page_indices_, &last_page_len_, &k_rope_pos_offset_})
    tables->resize(depths);
  std::vector<std::pair<NDArray*, const std::vector<int32_t>*>> tables = {
      {&append_indptr_, &plan_.append_indptr},
      {&k_ragged_rope_pos_offset_, &plan_.k_ragged_rope_pos_offset},
      {&q_rope_position_map_, &plan_.q_rope_position_map},
      {&append_position_map_, &plan_.append_position_map}};
  for (size_t d = 0; d < depths; ++d) {
    const DepthTables& t = plan_.depths[d];
    tables.insert(tables.end(), {{&qo_indptr_[d], &t.qo_indptr},
                                 {&page_indptr_[d], &t.page_indptr},
                                 {&page_indices_[d], &t.page_indices},
                                 {&last_page_len_[d], &t.last_page_len},
                                 {&k_rope_pos_offset_[d], &t.k_rope_pos_offset}});
  }
  // Every table gets a slot of its own, an empty one too, so that each view lies inside the buffer.
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const auto& t : tables) {
    offsets.push_back(total);
    const size_t bytes = t.second->size() * sizeof(int32_t);
    total += std::max<size_t>(1, (bytes + kStagingAlignment - 1) / kStagingAlignment) * kStagingAlignment;
  }
  // What is copied ends with the last table's values, not its slot.
  const size_t used = offsets.back() + tables.back().second->size() * sizeof(int32_t);
  staging_.resize(total);
  for (size_t i = 0; i < tables.size(); ++i)
    std::copy(tables[i].second->begin(), tables[i].second->end(),
              reinterpret_cast<int32_t*>(staging_.data() + offsets[i]));
  const NDArray staged = apis_.empty({static_cast<int64_t>(total / sizeof(int32_t))}, kInt32, config_.device);
  apis_.copy_from_bytes(staged.view({static_cast<int64_t>(used / sizeof(int32_t))}, kInt32), staging_.data(), used);
  for (size_t i = 0; i < tables.size(); ++i)
    *tables[i].first = staged.view({static_cast<int64_t>(tables[i].second->size())}, kInt32, offsets[i]);
}

const ForwardPlan& PagedKVCache::plan() const {
  if (!forward_active_)
    throw Error(ErrorKind::kFailedPrecondition,
                "no forward pass under way (call vm.builtin.kv_state_begin_forward first; adding, removing, forking "
                "or popping sequences ends the pass)");
  return plan_;
}

NDArray PagedKVCache::temp(const NDArray& buffer, std::initializer_list<int64_t> shape) const {
  for (const NDArray& v : temp_views_)
    if (v.use_count() == 1 && v->data == buffer->data && v.shape().size() == shape.size() &&
        std::equal(shape.begin(), shape.end(), v.shape().begin()))
      return v;
  NDArray v = buffer.view(std::vector<int64_t>(shape), buffer.dtype());
  // The shapes of a few batch sizes for each of the six buffers; past them the oldest goes.
  constexpr size_t kKept = 48;
  if (temp_views_.size() >= kKept) temp_views_.erase(temp_views_.begin());
  temp_views_.push_back(v);
  return v;
}

NDArray PagedKVCache::query_positions() const {
  plan();
  return q_rope_position_map_;
}

void PagedKVCache::attention_with_fused_qkv(int64_t layer, const NDArray& qkv, const NDArray& out, double sm_scale) {
  const ForwardPlan& p = plan();
  const CacheConfig& c = config_;
  const int64_t local = layer - c.layer_begin;
  const int64_t n = p.total_append;
  NDArray qkv_rows = qkv.shape()[0] == n ? qkv : qkv.view({n, qkv.shape()[1], qkv.shape()[2]}, qkv.dtype());
  NDArray out_rows = out.shape()[0] == n ? out : out.view({n, c.num_qo_heads, c.qk_head_dim}, out.dtype());
  const NDArray q = temp(temp_q_, {n, c.num_qo_heads, c.qk_head_dim});
  const NDArray k = temp(temp_k_, {n, c.num_kv_heads, c.qk_head_dim});
  const NDArray v = temp(temp_v_, {n, c.num_kv_heads, c.v_head_dim});
  invoke(kernels_.split_rotary, "split_rotary",
         {qkv_rows, q_rope_position_map_, q, k, v, int64_t{c.rope_mode == RopeMode::kNormal ? 1 : 0}});
  const NDArray& pages = pages_[static_cast<size_t>(local)];
  auto append = [&] { invoke(kernels_.transpose_append, "transpose_append", {pages, k, v, append_position_map_}); };
  if (p.append_before_attn) append();  // the paged kernels read the new tokens too
  const NDArray lse = temp(merged_lse_, {n, c.num_qo_heads});
  bool first = true;
  if (!p.append_before_attn) {
    self_attention(q, k, v, out_rows, lse, sm_scale);
    first = false;
  }
  paged_attention(local, q, out_rows, lse, sm_scale, first);
  if (!p.append_before_attn) append();
}

void PagedKVCache::self_attention(const NDArray& q, const NDArray& k, const NDArray& v, const NDArray& out,
                                  const NDArray& lse, double sm_scale) {
  plan();
  const CacheConfig& c = config_;
  invoke(kernels_.prefill_ragged, "attention_prefill_ragged",
         {q, append_indptr_, k, v, append_indptr_, q_rope_position_map_, k_ragged_rope_pos_offset_, out, lse,
          int64_t{1}, int64_t{c.rope_mode == RopeMode::kInline ? 1 : 0}, c.rope_scale, c.rope_theta, sm_scale});
}

void PagedKVCache::cross_attention(int64_t layer, const NDArray& q, const NDArray& out, const NDArray& lse,
                                   double sm_scale) {
  plan();
  paged_attention(layer - config_.layer_begin, q, out, lse, sm_scale, true);
}

// Attention of the queries to the cached pages, depth by depth; each depth's
// result after the first (or after a self-attention, `first` false) is
// merged into out/lse.
void PagedKVCache::paged_attention(int64_t local_layer, const NDArray& q, const NDArray& out, const NDArray& lse,
                                   double sm_scale, bool first) {
  const CacheConfig& c = config_;
  const int64_t n = plan_.total_append;
  const int64_t inline_rope = c.rope_mode == RopeMode::kInline ? 1 : 0;
  const NDArray& pages = pages_[static_cast<size_t>(local_layer)];
  for (size_t d = 0; d < plan_.depths.size(); ++d) {
    if (plan_.depths[d].page_indices.empty()) continue;
    const NDArray o = first ? out : temp(temp_out_, {n, c.num_qo_heads, c.v_head_dim});
    const NDArray s = first ? lse : temp(temp_lse_, {n, c.num_qo_heads});
    if (plan_.depths[d].use_decode_kernel) {
      invoke(kernels_.decode_paged, "attention_decode",
             {q, pages, page_indptr_[d], page_indices_[d], last_page_len_[d], k_rope_pos_offset_[d], q_rope_position_map_,
              o, s, inline_rope, c.rope_scale, c.rope_theta, sm_scale});
    } else {
      invoke(kernels_.prefill_paged, "attention_prefill",
             {q, qo_indptr_[d], pages, page_indptr_[d], page_indices_[d], last_page_len_[d], k_rope_pos_offset_[d],
              q_rope_position_map_, o, s, int64_t{0}, inline_rope, c.rope_scale, c.rope_theta, sm_scale});
    }
    if (!first) invoke(kernels_.merge_inplace, "attention_merge_state", {out, lse, o, s});
    first = false;
  }
}

void PagedKVCache::merge_attn_output(const NDArray& o, const NDArray& lse, const NDArray& o_other,
                                     const NDArray& lse_other) {
  invoke(kernels_.merge_general, "attention_merge_state", {o, lse, o_other, lse_other});
}

void PagedKVCache::debug_get_kv(int64_t seq_id, int64_t start, int64_t end, const NDArray& k, const NDArray& v) {
  const Sequence& seq = table_.sequence(seq_id);
  std::vector<int32_t> slots;
  for (int32_t b : table_.trace(seq)) {
    const Block& blk = table_.block(b);
    for (int32_t i = 0; i < blk.length; ++i)
      slots.push_back(static_cast<int32_t>(blk.pages[static_cast<size_t>(i / config_.page_size)] * config_.page_size +
                                           i % config_.page_size));
  }
  const std::vector<int32_t> wanted(slots.begin() + start, slots.begin() + end);
  NDArray positions;
  refill_int32(&positions, wanted);
  for (size_t l = 0; l < pages_.size(); ++l)
    invoke(kernels_.debug_get_kv, "debug_get_kv", {pages_[l], positions, k, v, static_cast<int64_t>(l)});
}

}  // namespace kv
}  // namespace relax
}  // namespace graphrt
