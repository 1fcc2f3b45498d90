// vm.builtin.paged_attention_kv_cache_create's 28 arguments (TVM v0.26
// kv_cache.py TIRPagedKVCache / paged_kv_cache.cc), read and checked:
//   0 ShapeTuple (max_batch_size, max_total_seq_len, prefill_chunk_size,
//     page_size, support_sliding_window)   1 layer partition ShapeTuple (0, L)
//   2-5 num_qo_heads, num_kv_heads, qk_head_dim, v_head_dim
//   6 attention kind per layer (0: MHA)     7 enable KV transfer
//   8 RoPE mode   9 RoPE scale   10 RoPE theta   11 RoPE ext factors (None)
//   12 a 0-d tensor of the cache's dtype on its device
//   13 transpose_append   14 transpose_append_mla
//   15-21 ("tirx", kernel) tuples: prefill ragged, prefill paged, decode
//     paged, their sliding-window twins, the two tree-mask kernels
//   22 MLA prefill tuple (empty)   23 (merge_state[, merge general]) tuple
//   24 split_rotary   25 copy_single_page   26 debug_get_kv   27 compact_kv_copy
#pragma once

#include "backends/relax/builtin.h"
#include "backends/relax/kv_cache/paged_kv_cache.h"

namespace graphrt {
namespace relax {
namespace kv {

// The cache allocates and copies through `runtime`'s API of its device, resolved here once.
Ref<PagedKVCache> create_paged_kv_cache(const Runtime& runtime, const BuiltinArgs& args);

}  // namespace kv
}  // namespace relax
}  // namespace graphrt
