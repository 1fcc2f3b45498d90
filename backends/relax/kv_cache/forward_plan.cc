#include "backends/relax/kv_cache/forward_plan.h"

#include <algorithm>
#include <utility>

namespace graphrt {
namespace relax {
namespace kv {

namespace {

using Chunk = std::pair<int32_t, int64_t>;  // block (or -1), query rows attending to it

// The batch's block traces cut at kMaxBlockDepth: blocks[d][i] is sequence
// i's block at depth d (-1 when shorter); trailing[i] its blocks past the
// last depth, which the last depth's tables take in.
struct DepthBlocks {
  std::vector<std::vector<int32_t>> blocks;
  std::vector<std::vector<int32_t>> trailing;
};

DepthBlocks blocks_on_depths(const BlockTable& table, const std::vector<const Sequence*>& seqs) {
  DepthBlocks out;
  std::vector<std::vector<int32_t>> traces;
  size_t depths = 0;
  for (const Sequence* seq : seqs) {
    std::vector<int32_t> trace = table.trace(*seq);
    std::vector<int32_t> trailing;
    if (trace.size() > static_cast<size_t>(kMaxBlockDepth)) {
      trailing.assign(trace.begin() + kMaxBlockDepth, trace.end());
      trace.resize(kMaxBlockDepth);
    }
    depths = std::max(depths, trace.size());
    traces.push_back(std::move(trace));
    out.trailing.push_back(std::move(trailing));
  }
  out.blocks.resize(depths);
  for (size_t d = 0; d < depths; ++d)
    for (const auto& trace : traces) out.blocks[d].push_back(d < trace.size() ? trace[d] : -1);
  return out;
}

size_t pages_of(const BlockTable& table, int32_t b) { return b == -1 ? 0 : table.block(b).pages.size(); }

// TVM's GetChunkedBlockIds: adjacent sequences that attend to the same block
// are coalesced into one prefill chunk, unless this is a decode step whose
// coalescing saves little (then each sequence is its own chunk, decode kernel).
std::vector<Chunk> chunk_depth(const BlockTable& table, const std::vector<int32_t>& blocks, bool enable_coalesce,
                               const std::vector<int64_t>& lengths, bool is_decode, bool* use_decode_kernel) {
  std::vector<Chunk> separate;
  std::vector<Chunk> coalesced;
  size_t pages_separate = 0;
  size_t pages_coalesced = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    separate.emplace_back(blocks[i], lengths[i]);
    pages_separate += pages_of(table, blocks[i]);
    if (!coalesced.empty() && coalesced.back().first == blocks[i]) {
      coalesced.back().second += lengths[i];
    } else {
      coalesced.emplace_back(blocks[i], lengths[i]);
      pages_coalesced += pages_of(table, blocks[i]);
    }
  }
  const double ratio =
      pages_coalesced > 0 ? static_cast<double>(pages_separate) / static_cast<double>(pages_coalesced) : 0.0;
  *use_decode_kernel = is_decode && ratio < 32;
  return *use_decode_kernel || !enable_coalesce ? separate : coalesced;
}

int32_t last_page_len(int64_t length, int64_t page_size) {
  return length == 0 ? 0 : static_cast<int32_t>((length - 1) % page_size + 1);
}

void push_pages(const Block& b, std::vector<int32_t>* indices) {
  indices->insert(indices->end(), b.pages.begin(), b.pages.end());
}

// One chunk's entries in the depth's tables. At the last depth a sequence's
// trailing blocks count as part of its block there.
void add_chunk(const BlockTable& table, const Chunk& chunk, bool last_depth, const std::vector<int32_t>& trailing,
               DepthTables* t) {
  t->qo_indptr.push_back(t->qo_indptr.back() + static_cast<int32_t>(chunk.second));
  if (chunk.first == -1) {
    t->page_indptr.push_back(t->page_indptr.back());
    t->last_page_len.push_back(0);
    t->k_rope_pos_offset.push_back(0);
    return;
  }
  const Block& b = table.block(chunk.first);
  size_t pages = b.pages.size();
  int64_t length = b.length;
  push_pages(b, &t->page_indices);
  if (last_depth) {
    for (int32_t id : trailing) {
      push_pages(table.block(id), &t->page_indices);
      pages += table.block(id).pages.size();
      length += table.block(id).length;
    }
  }
  t->page_indptr.push_back(t->page_indptr.back() + static_cast<int32_t>(pages));
  t->last_page_len.push_back(last_page_len(length, table.page_size()));
  t->k_rope_pos_offset.push_back(b.start_pos);
}

void fill_depth(const BlockTable& table, const std::vector<Chunk>& chunks, bool last_depth,
                const std::vector<std::vector<int32_t>>& trailing, DepthTables* t) {
  t->qo_indptr.assign(1, 0);
  t->page_indptr.assign(1, 0);
  static const std::vector<int32_t> kNone;
  for (size_t i = 0; i < chunks.size(); ++i)
    add_chunk(table, chunks[i], last_depth, last_depth ? trailing[i] : kNone, t);
}

// Where each new token's K/V go and its RoPE position (the sequences have been grown).
void fill_positions(const BlockTable& table, const std::vector<const Sequence*>& seqs, ForwardPlan* plan) {
  plan->append_indptr.assign(1, 0);
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int64_t n = plan->append_lengths[i];
    plan->append_indptr.push_back(plan->append_indptr.back() + static_cast<int32_t>(n));
    const Block& b = table.block(seqs[i]->last_block);
    for (int64_t pos = 0; pos < n; ++pos) {
      plan->q_rope_position_map.push_back(plan->k_ragged_rope_pos_offset[i] + static_cast<int32_t>(pos));
      const int64_t in_block = b.length - n + pos;
      const int64_t page = b.pages[static_cast<size_t>(in_block / table.page_size())];
      plan->append_position_map.push_back(static_cast<int32_t>(page * table.page_size() + in_block % table.page_size()));
    }
  }
}

}  // namespace

ForwardPlan plan_forward(BlockTable& table, const std::vector<int64_t>& seq_ids,
                         const std::vector<int64_t>& append_lengths) {
  ForwardPlan plan;
  plan.seq_ids = seq_ids;
  plan.append_lengths = append_lengths;
  std::vector<Sequence*> seqs;
  bool is_decode = true;
  for (size_t i = 0; i < seq_ids.size(); ++i) {
    Sequence& seq = table.sequence(seq_ids[i]);
    plan.k_ragged_rope_pos_offset.push_back(seq.length);
    seq.length += static_cast<int32_t>(append_lengths[i]);
    plan.total_append += append_lengths[i];
    if (append_lengths[i] != 1) is_decode = false;
    seqs.push_back(&seq);
  }
  const std::vector<const Sequence*> cseqs(seqs.begin(), seqs.end());
  const DepthBlocks depth_blocks = blocks_on_depths(table, cseqs);
  std::vector<std::vector<Chunk>> chunks;
  for (size_t d = 0; d < depth_blocks.blocks.size(); ++d) {
    plan.depths.emplace_back();
    const bool coalesce = d != kMaxBlockDepth - 1;
    chunks.push_back(chunk_depth(table, depth_blocks.blocks[d], coalesce, append_lengths, is_decode,
                                 &plan.depths.back().use_decode_kernel));
  }
  plan.append_before_attn = plan.depths.back().use_decode_kernel;
  auto grow = [&] {
    for (size_t i = 0; i < seqs.size(); ++i) table.reserve(*seqs[i], append_lengths[i]);
  };
  if (plan.append_before_attn) grow();  // the paged kernels then read the new tokens too
  for (size_t d = 0; d < plan.depths.size(); ++d)
    fill_depth(table, chunks[d], d == kMaxBlockDepth - 1, depth_blocks.trailing, &plan.depths[d]);
  if (!plan.append_before_attn) grow();
  fill_positions(table, cseqs, &plan);
  return plan;
}

}  // namespace kv
}  // namespace relax
}  // namespace graphrt
