// TVM's paged attention KV cache (relax.vm.PagedAttentionKVCache) as a Relax
// VM value: per layer one page tensor [pages, 2 (K, V), kv_heads, page_size,
// head_dim], the block table, and the kernels it was created with (the
// model library's own attention, RoPE, append and copy kernels), called
// through the packed convention like any kernel. Multi-head attention
// (MHA/GQA) with RoPE applied by the cache or none; sliding windows, token
// trees, MLA and KV transfer are refused where they are asked for.
//
// The callers (kv_cache/builtins.cc) check arguments and name them; the
// object checks its own state (capacity, the forward pass under way).
#pragma once

#include <cstdint>
#include <string>
#include <initializer_list>
#include <utility>
#include <vector>

#include "graphrt/device_api.h"
#include "graphrt/ndarray.h"
#include "graphrt/packed_func.h"
#include "backends/relax/kv_cache/block_table.h"
#include "backends/relax/kv_cache/forward_plan.h"
#include "backends/relax/value.h"

namespace graphrt {
namespace relax {
namespace kv {

enum class RopeMode : int64_t { kNone = 0, kNormal = 1, kInline = 2 };

struct CacheConfig {
  int64_t max_batch_size = 0;
  int64_t max_total_seq_len = 0;
  int64_t prefill_chunk_size = 0;
  int64_t page_size = 0;
  int64_t num_pages = 0;  // TVM's: ceil(max_total_seq_len / page_size) + 1
  int64_t layer_begin = 0;  // this cache's layers: [layer_begin, layer_begin + num_layers)
  int64_t num_layers = 0;
  int64_t num_qo_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t qk_head_dim = 0;
  int64_t v_head_dim = 0;
  RopeMode rope_mode = RopeMode::kNone;
  double rope_scale = 1;
  double rope_theta = 10000;
  DLDataType dtype{kDLFloat, 32, 1};
  DLDevice device{kDLCPU, 0};
};

// The kernels a cache calls (TVM's create arguments 13-27, TIR backend).
struct CacheKernels {
  PackedFunc transpose_append;  // (pages, k, v, append_position_map)
  PackedFunc prefill_ragged;    // attention of new queries to new K/V
  PackedFunc prefill_paged;     // attention of queries to cached pages
  PackedFunc decode_paged;      // the same, one query per sequence
  PackedFunc merge_inplace;     // (o, lse, o_other, lse_other)
  PackedFunc merge_general;     // merge_attn_output_inplace's (optional)
  PackedFunc split_rotary;      // (qkv, positions, q, k, v, apply_rope)
  PackedFunc copy_single_page;  // (pages, src, dst, length)
  PackedFunc debug_get_kv;      // (pages, position_map, k, v, layer)
};

class PagedKVCache : public StateObj {
 public:
  // `apis`: the API of config.device, from the runtime whose create function made the
  // cache; every allocation and copy of the cache goes through it.
  PagedKVCache(const CacheConfig& config, CacheKernels kernels, DeviceApis apis);
  const char* object_type_key() const override { return "relax.vm.PagedAttentionKVCache"; }

  const CacheConfig& config() const { return config_; }
  const BlockTable& table() const { return table_; }
  bool in_forward() const { return forward_active_; }
  bool has_general_merge() const { return static_cast<bool>(kernels_.merge_general); }

  void clear();
  void add_sequence(int64_t seq_id);
  void remove_sequence(int64_t seq_id);
  void fork_sequence(int64_t parent_id, int64_t child_id, int64_t fork_pos);
  void popn(int64_t seq_id, int64_t n);
  // Checks the batch as a whole (capacity, chunk size), then plans it.
  void begin_forward(const std::vector<int64_t>& seq_ids, const std::vector<int64_t>& append_lengths);
  void end_forward() { forward_active_ = false; }

  // `layer` is the model's layer id; tensors were checked by the caller
  // against the forward pass (shapes, dtypes).
  void attention_with_fused_qkv(int64_t layer, const NDArray& qkv, const NDArray& out, double sm_scale);
  void self_attention(const NDArray& q, const NDArray& k, const NDArray& v, const NDArray& out, const NDArray& lse,
                      double sm_scale);
  void cross_attention(int64_t layer, const NDArray& q, const NDArray& out, const NDArray& lse, double sm_scale);
  void merge_attn_output(const NDArray& o, const NDArray& lse, const NDArray& o_other, const NDArray& lse_other);
  // The new tokens' positions (int32 [total_append]) of the forward pass under way.
  NDArray query_positions() const;
  // K and V of tokens [start, end) of a sequence, every layer: k/v [layers, end - start, kv_heads, head_dim].
  void debug_get_kv(int64_t seq_id, int64_t start, int64_t end, const NDArray& k, const NDArray& v);

  // The forward pass under way (throws kFailedPrecondition when none is).
  const ForwardPlan& plan() const;

 private:
  void copy_page(int32_t src, int32_t dst, int64_t length);
  void upload_plan();
  void stage_plan();
  void paged_attention(int64_t local_layer, const NDArray& q, const NDArray& out, const NDArray& lse,
                       double sm_scale, bool first);
  // `buffer` viewed as `shape`: a view made before that nobody holds now, else a new one kept.
  NDArray temp(const NDArray& buffer, std::initializer_list<int64_t> shape) const;
  void refill_int32(NDArray* slot, const std::vector<int32_t>& values) const;

  CacheConfig config_;
  CacheKernels kernels_;
  DeviceApis apis_;
  BlockTable table_;
  std::vector<NDArray> pages_;  // one per layer
  ForwardPlan plan_;
  bool forward_active_ = false;
  // The host side of a device's one upload per forward pass (stage_plan).
  std::vector<uint8_t> staging_;
  // The plan as device tensors, made once per forward pass.
  NDArray append_indptr_, k_ragged_rope_pos_offset_, q_rope_position_map_, append_position_map_;
  std::vector<NDArray> qo_indptr_, page_indptr_, page_indices_, last_page_len_, k_rope_pos_offset_;
  // Scratch of prefill_chunk_size rows, viewed at each pass's length.
  NDArray temp_q_, temp_k_, temp_v_, temp_out_, temp_lse_, merged_lse_;
  // Kept so that a steady decode allocates nothing: temp's views, and the memory of the host
  // tables refill_int32 made with room to grow, whose length it then changes in place (a new
  // page makes page_indices one longer).
  mutable std::vector<NDArray> temp_views_;
  mutable std::vector<NDArray> table_memory_;
  PlanScratch plan_scratch_;
};

}  // namespace kv
}  // namespace relax
}  // namespace graphrt
