// What one forward pass of the paged KV cache hands its kernels: for the
// batch named at begin_forward (sequence ids and how many tokens each
// appends), the page tables of the blocks each query attends to, depth by
// depth (depth 0: the sequences' root blocks, depth 1: the rest, TVM's
// kPagedKVCacheMaxBlockDepth = 2), where each new token's K/V goes, and the
// RoPE positions. Built as TVM's PagedAttentionKVCacheObj::BeginForward
// builds them (the same values in the same order), as int32 host vectors.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "backends/relax/kv_cache/block_table.h"

namespace graphrt {
namespace relax {
namespace kv {

constexpr int kMaxBlockDepth = 2;

// The blocks one depth's queries attend to, one entry per chunk of queries
// (a chunk is one sequence's, or several sequences' sharing that block).
struct DepthTables {
  std::vector<int32_t> qo_indptr;          // [chunks + 1] query rows of each chunk
  std::vector<int32_t> page_indptr;        // [chunks + 1] into page_indices
  std::vector<int32_t> page_indices;       // [pages]
  std::vector<int32_t> last_page_len;      // [chunks] tokens in each chunk's last page
  std::vector<int32_t> k_rope_pos_offset;  // [chunks] position of each chunk's first cached token
  bool use_decode_kernel = false;
};

struct ForwardPlan {
  std::vector<int64_t> seq_ids;
  std::vector<int64_t> append_lengths;
  int64_t total_append = 0;
  std::vector<DepthTables> depths;
  // Whether the new K/V enter the pages before attention (then the paged
  // kernels see them: decode), or after it (a ragged kernel attends to them
  // first: prefill).
  bool append_before_attn = false;
  std::vector<int32_t> append_indptr;             // [batch + 1]
  std::vector<int32_t> k_ragged_rope_pos_offset;  // [batch] each sequence's length before the append
  std::vector<int32_t> q_rope_position_map;       // [total_append] each new token's position
  std::vector<int32_t> append_position_map;       // [total_append] each new token's slot (page * page_size + offset)
};

// What planning uses on the way, kept by the cache from pass to pass with the plan itself, so
// that a steady decode's plan reuses their capacity and allocates nothing.
struct PlanScratch {
  std::vector<Sequence*> seqs;
  std::vector<std::vector<int32_t>> traces;    // each sequence's blocks up to kMaxBlockDepth
  std::vector<std::vector<int32_t>> trailing;  // and those past it
  std::vector<std::vector<int32_t>> blocks;    // [depth][sequence]
  std::vector<std::vector<std::pair<int32_t, int64_t>>> chunks, coalesced;  // [depth]
};

// Plans the forward pass into *plan (its vectors refilled) and grows the sequences by their
// append lengths (pages taken as needed). The caller checked the batch: known, distinct
// sequences, positive lengths, appendable last blocks, enough free pages.
void plan_forward(BlockTable& table, const std::vector<int64_t>& seq_ids, const std::vector<int64_t>& append_lengths,
                  ForwardPlan* plan, PlanScratch* scratch);
// The same into a new plan.
ForwardPlan plan_forward(BlockTable& table, const std::vector<int64_t>& seq_ids,
                         const std::vector<int64_t>& append_lengths);

}  // namespace kv
}  // namespace relax
}  // namespace graphrt
