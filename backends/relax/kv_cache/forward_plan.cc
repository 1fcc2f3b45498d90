#include "backends/relax/kv_cache/forward_plan.h"

#include <algorithm>
#include <utility>

namespace graphrt {
namespace relax {
namespace kv {

namespace {

using Chunk = std::pair<int32_t, int64_t>;  // block (or -1), query rows attending to it

// Resizes a vector of vectors to n, keeping the inner ones' capacity (clear, not free).
template <typename T>
void reset(std::vector<std::vector<T>>* v, size_t n) {
  if (v->size() < n) v->resize(n);
  for (size_t i = 0; i < n; ++i) (*v)[i].clear();
}

// The batch's block traces cut at kMaxBlockDepth: s->blocks[d][i] is sequence i's block at
// depth d (-1 when shorter); s->trailing[i] its blocks past the last depth, which the last
// depth's tables take in. Returns the number of depths.
size_t blocks_on_depths(const BlockTable& table, PlanScratch* s) {
  const size_t n = s->seqs.size();
  reset(&s->traces, n);
  reset(&s->trailing, n);
  size_t depths = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int32_t>& trace = s->traces[i];
    table.trace(*s->seqs[i], &trace);
    if (trace.size() > static_cast<size_t>(kMaxBlockDepth)) {
      s->trailing[i].assign(trace.begin() + kMaxBlockDepth, trace.end());
      trace.resize(kMaxBlockDepth);
    }
    depths = std::max(depths, trace.size());
  }
  reset(&s->blocks, depths);
  for (size_t d = 0; d < depths; ++d)
    for (size_t i = 0; i < n; ++i) s->blocks[d].push_back(d < s->traces[i].size() ? s->traces[i][d] : -1);
  return depths;
}

size_t pages_of(const BlockTable& table, int32_t b) { return b == -1 ? 0 : table.block(b).pages.size(); }

// TVM's GetChunkedBlockIds: adjacent sequences that attend to the same block
// are coalesced into one prefill chunk, unless this is a decode step whose
// coalescing saves little (then each sequence is its own chunk, decode kernel).
// *separate gets the chunks used; *coalesced is scratch.
void chunk_depth(const BlockTable& table, const std::vector<int32_t>& blocks, bool enable_coalesce,
                 const std::vector<int64_t>& lengths, bool is_decode, bool* use_decode_kernel,
                 std::vector<Chunk>* separate, std::vector<Chunk>* coalesced) {
  separate->clear();
  coalesced->clear();
  size_t pages_separate = 0;
  size_t pages_coalesced = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    separate->emplace_back(blocks[i], lengths[i]);
    pages_separate += pages_of(table, blocks[i]);
    if (!coalesced->empty() && coalesced->back().first == blocks[i]) {
      coalesced->back().second += lengths[i];
    } else {
      coalesced->emplace_back(blocks[i], lengths[i]);
      pages_coalesced += pages_of(table, blocks[i]);
    }
  }
  const double ratio =
      pages_coalesced > 0 ? static_cast<double>(pages_separate) / static_cast<double>(pages_coalesced) : 0.0;
  *use_decode_kernel = is_decode && ratio < 32;
  if (!*use_decode_kernel && enable_coalesce) separate->swap(*coalesced);
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
  t->page_indices.clear();
  // Room for the cache's every page once: a decode whose sequences take a new page then does
  // not grow the list.
  if (t->page_indices.capacity() < static_cast<size_t>(table.num_pages()))
    t->page_indices.reserve(static_cast<size_t>(table.num_pages()));
  t->last_page_len.clear();
  t->k_rope_pos_offset.clear();
  static const std::vector<int32_t> kNone;
  for (size_t i = 0; i < chunks.size(); ++i)
    add_chunk(table, chunks[i], last_depth, last_depth ? trailing[i] : kNone, t);
}

// Where each new token's K/V go and its RoPE position (the sequences have been grown).
void fill_positions(const BlockTable& table, const std::vector<Sequence*>& seqs, ForwardPlan* plan) {
  plan->append_indptr.assign(1, 0);
  plan->q_rope_position_map.clear();
  plan->append_position_map.clear();
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

void plan_forward(BlockTable& table, const std::vector<int64_t>& seq_ids, const std::vector<int64_t>& append_lengths,
                  ForwardPlan* out, PlanScratch* scratch) {
  ForwardPlan& plan = *out;
  PlanScratch& s = *scratch;
  plan.seq_ids.assign(seq_ids.begin(), seq_ids.end());
  plan.append_lengths.assign(append_lengths.begin(), append_lengths.end());
  plan.total_append = 0;
  plan.k_ragged_rope_pos_offset.clear();
  s.seqs.clear();
  bool is_decode = true;
  for (size_t i = 0; i < seq_ids.size(); ++i) {
    Sequence& seq = table.sequence(seq_ids[i]);
    plan.k_ragged_rope_pos_offset.push_back(seq.length);
    seq.length += static_cast<int32_t>(append_lengths[i]);
    plan.total_append += append_lengths[i];
    if (append_lengths[i] != 1) is_decode = false;
    s.seqs.push_back(&seq);
  }
  const size_t depths = blocks_on_depths(table, &s);
  // The depths' tables keep their vectors (resize, not clear: a vector of depths dropped would
  // free them).
  if (plan.depths.size() < depths) plan.depths.resize(depths);
  while (plan.depths.size() > depths) plan.depths.pop_back();
  reset(&s.chunks, depths);
  reset(&s.coalesced, depths);
  for (size_t d = 0; d < depths; ++d) {
    const bool coalesce = d != kMaxBlockDepth - 1;
    chunk_depth(table, s.blocks[d], coalesce, append_lengths, is_decode, &plan.depths[d].use_decode_kernel,
                &s.chunks[d], &s.coalesced[d]);
  }
  plan.append_before_attn = plan.depths.back().use_decode_kernel;
  auto grow = [&] {
    for (size_t i = 0; i < s.seqs.size(); ++i) table.reserve(*s.seqs[i], append_lengths[i]);
  };
  if (plan.append_before_attn) grow();  // the paged kernels then read the new tokens too
  for (size_t d = 0; d < depths; ++d) fill_depth(table, s.chunks[d], d == kMaxBlockDepth - 1, s.trailing, &plan.depths[d]);
  if (!plan.append_before_attn) grow();
  fill_positions(table, s.seqs, &plan);
}

ForwardPlan plan_forward(BlockTable& table, const std::vector<int64_t>& seq_ids,
                         const std::vector<int64_t>& append_lengths) {
  ForwardPlan plan;
  PlanScratch scratch;
  plan_forward(table, seq_ids, append_lengths, &plan, &scratch);
  return plan;
}

}  // namespace kv
}  // namespace relax
}  // namespace graphrt
