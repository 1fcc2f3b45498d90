// TVM's paged KV cache (backends/relax/kv_cache): the block table and the
// forward plan against page tables worked out by hand, the cache's attention
// against attention over each sequence's whole history (reference kernels
// that compute what the tables say), and the builtins' errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graphrt/runtime.h"
#include "kv_reference_kernels.h"
#include "backends/relax/kv_cache/block_table.h"
#include "backends/relax/kv_cache/forward_plan.h"
#include "backends/relax/kv_cache/paged_kv_cache.h"
#include "backends/relax/packed_convention.h"

namespace {

using namespace graphrt::relax;
using graphrt::NDArray;
using graphrt::relax::kv::BlockTable;
using graphrt_test::KvReferenceKernels;
using I32 = std::vector<int32_t>;

const DLDataType kF32{kDLFloat, 32, 1};

// ---------------------------------------------------------------- block table

TEST(KvBlockTable, PagesComeFromPageZeroUpAndReturnOnRemove) {
  BlockTable t(4, 10);
  t.add(7);
  t.reserve(t.sequence(7), 9);  // 3 pages
  EXPECT_EQ(t.block(t.sequence(7).last_block).pages, (I32{0, 1, 2}));
  EXPECT_EQ(t.free_pages(), 7);
  t.sequence(7).length = 9;
  EXPECT_EQ(t.total_length(), 9);
  t.remove(7);
  EXPECT_EQ(t.free_pages(), 10);
  EXPECT_TRUE(t.empty());
}

TEST(KvBlockTable, ForkInsideAPageSplitsTheBlockAndCopiesThePartialPage) {
  BlockTable t(4, 10);
  t.add(0);
  t.reserve(t.sequence(0), 10);  // pages 0 1 2, the last holding 2 tokens
  t.sequence(0).length = 10;
  std::vector<std::vector<int64_t>> copies;
  t.fork(0, 1, 6, [&](int32_t s, int32_t d, int64_t n) { copies.push_back({s, d, n}); });
  // The first page (tokens 0-3) moves to a shared block; the child copies tokens 4-5 of page 1.
  ASSERT_EQ(copies, (std::vector<std::vector<int64_t>>{{1, 3, 2}}));
  const kv::Sequence& parent = t.sequence(0);
  const kv::Sequence& child = t.sequence(1);
  EXPECT_EQ(parent.length, 10);
  EXPECT_EQ(child.length, 6);
  const std::vector<int32_t> pt = t.trace(parent), ct = t.trace(child);
  ASSERT_EQ(pt.size(), 2u);
  ASSERT_EQ(ct.size(), 2u);
  EXPECT_EQ(pt[0], ct[0]);  // the shared block
  EXPECT_EQ(t.block(pt[0]).pages, (I32{0}));
  EXPECT_EQ(t.block(pt[0]).refs, 2);
  EXPECT_EQ(t.block(pt[1]).pages, (I32{1, 2}));
  EXPECT_EQ(t.block(pt[1]).start_pos, 4);
  EXPECT_EQ(t.block(pt[1]).length, 6);
  EXPECT_EQ(t.block(ct[1]).pages, (I32{3}));
  EXPECT_EQ(t.block(ct[1]).start_pos, 4);
  EXPECT_EQ(t.block(ct[1]).length, 2);
  EXPECT_EQ(t.free_pages(), 6);
}

TEST(KvBlockTable, PopIntoASharedBlockRefitsTheSequence) {
  BlockTable t(4, 10);
  t.add(0);
  t.reserve(t.sequence(0), 10);
  t.sequence(0).length = 10;
  auto no_copy = [](int32_t, int32_t, int64_t) {};
  t.fork(0, 1, 6, no_copy);
  std::vector<std::vector<int64_t>> copies;
  t.pop(1, 4, [&](int32_t s, int32_t d, int64_t n) { copies.push_back({s, d, n}); });
  // The child keeps 2 tokens of the shared first page, copied into a page of its own.
  EXPECT_EQ(t.sequence(1).length, 2);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0][0], 0);
  EXPECT_EQ(copies[0][2], 2);
  EXPECT_EQ(t.trace(t.sequence(1)).size(), 1u);
  EXPECT_EQ(t.sequence(0).length, 10);
  EXPECT_EQ(t.free_pages(), 10 - 3 - 1);
  t.remove(0);
  t.remove(1);
  EXPECT_TRUE(t.empty());
}

TEST(KvBlockTable, PopWithinTheLastBlockFreesItsEmptiedPages) {
  BlockTable t(4, 10);
  t.add(0);
  t.reserve(t.sequence(0), 10);
  t.sequence(0).length = 10;
  t.pop(0, 5, [](int32_t, int32_t, int64_t) { FAIL() << "no copy expected"; });
  EXPECT_EQ(t.sequence(0).length, 5);
  EXPECT_EQ(t.block(t.sequence(0).last_block).pages, (I32{0, 1}));
  EXPECT_EQ(t.free_pages(), 8);
}

// ---------------------------------------------------------------- forward plan

TEST(KvForwardPlan, PrefillOfANewSequenceAttendsToNoPage) {
  BlockTable t(16, 5);
  t.add(0);
  const kv::ForwardPlan p = kv::plan_forward(t, {0}, {5});
  EXPECT_FALSE(p.append_before_attn);
  ASSERT_EQ(p.depths.size(), 1u);
  EXPECT_FALSE(p.depths[0].use_decode_kernel);
  EXPECT_EQ(p.depths[0].qo_indptr, (I32{0, 5}));
  EXPECT_EQ(p.depths[0].page_indptr, (I32{0, 0}));
  EXPECT_EQ(p.depths[0].page_indices, I32{});
  EXPECT_EQ(p.depths[0].last_page_len, (I32{0}));
  EXPECT_EQ(p.append_indptr, (I32{0, 5}));
  EXPECT_EQ(p.k_ragged_rope_pos_offset, (I32{0}));
  EXPECT_EQ(p.q_rope_position_map, (I32{0, 1, 2, 3, 4}));
  EXPECT_EQ(p.append_position_map, (I32{0, 1, 2, 3, 4}));
  // Then a decode step: the new token goes in first and the decode kernel reads 6 tokens of page 0.
  const kv::ForwardPlan d = kv::plan_forward(t, {0}, {1});
  EXPECT_TRUE(d.append_before_attn);
  EXPECT_TRUE(d.depths[0].use_decode_kernel);
  EXPECT_EQ(d.depths[0].page_indptr, (I32{0, 1}));
  EXPECT_EQ(d.depths[0].page_indices, (I32{0}));
  EXPECT_EQ(d.depths[0].last_page_len, (I32{6}));
  EXPECT_EQ(d.q_rope_position_map, (I32{5}));
  EXPECT_EQ(d.append_position_map, (I32{5}));
  EXPECT_EQ(t.sequence(0).length, 6);
}

TEST(KvForwardPlan, ForkedSequencesDecodeOverTheSharedBlockAtDepthZero) {
  BlockTable t(4, 10);
  t.add(0);
  kv::plan_forward(t, {0}, {8});  // pages 0 1, full
  t.fork(0, 1, -1, [](int32_t, int32_t, int64_t) { FAIL() << "a page-aligned fork copies nothing"; });
  const kv::ForwardPlan p = kv::plan_forward(t, {0, 1}, {1, 1});
  EXPECT_TRUE(p.append_before_attn);
  ASSERT_EQ(p.depths.size(), 2u);
  EXPECT_EQ(p.depths[0].qo_indptr, (I32{0, 1, 2}));
  EXPECT_EQ(p.depths[0].page_indptr, (I32{0, 2, 4}));
  EXPECT_EQ(p.depths[0].page_indices, (I32{0, 1, 0, 1}));
  EXPECT_EQ(p.depths[0].last_page_len, (I32{4, 4}));
  EXPECT_EQ(p.depths[0].k_rope_pos_offset, (I32{0, 0}));
  EXPECT_EQ(p.depths[1].page_indptr, (I32{0, 1, 2}));
  EXPECT_EQ(p.depths[1].page_indices, (I32{2, 3}));
  EXPECT_EQ(p.depths[1].last_page_len, (I32{1, 1}));
  EXPECT_EQ(p.depths[1].k_rope_pos_offset, (I32{8, 8}));
  EXPECT_EQ(p.append_position_map, (I32{8, 12}));
  EXPECT_EQ(p.q_rope_position_map, (I32{8, 8}));
}

TEST(KvForwardPlan, APrefillOfSequencesSharingAPrefixCoalescesTheirQueries) {
  BlockTable t(4, 10);
  t.add(0);
  kv::plan_forward(t, {0}, {8});
  t.fork(0, 1, -1, [](int32_t, int32_t, int64_t) {});
  const kv::ForwardPlan p = kv::plan_forward(t, {0, 1}, {2, 3});
  EXPECT_FALSE(p.append_before_attn);
  EXPECT_FALSE(p.depths[0].use_decode_kernel);
  EXPECT_EQ(p.depths[0].qo_indptr, (I32{0, 5}));  // one chunk: both attend to the same block
  EXPECT_EQ(p.depths[0].page_indptr, (I32{0, 2}));
  EXPECT_EQ(p.depths[1].qo_indptr, (I32{0, 2, 5}));  // last depth: never coalesced
  EXPECT_EQ(p.depths[1].page_indptr, (I32{0, 0, 0}));  // tables made before the append
  EXPECT_EQ(p.append_position_map, (I32{8, 9, 12, 13, 14}));
}

// ---------------------------------------------------------------- the cache through its builtins

Value call(const std::string& name, std::vector<Value> args) {
  graphrt::PackedFunc f = graphrt::runtime().function(name);
  if (!f) throw std::runtime_error("no global " + name);
  std::vector<const Value*> argv;
  for (const Value& v : args) argv.push_back(&v);
  Value ret;
  call_packed(f, argv.data(), static_cast<int>(argv.size()), &ret);
  return ret;
}

Value tir(const graphrt::PackedFunc& f) { return make_tuple({std::make_shared<const std::string>("tirx"), f}); }

struct CacheShape {
  int64_t max_batch = 4, capacity = 64, chunk = 32, page = 4;
  int64_t layers = 2, qo_heads = 2, kv_heads = 1, dim = 4;
  int64_t sliding = 0;
};

std::vector<Value> create_args(const KvReferenceKernels& k, const CacheShape& s) {
  return {make_shape({s.max_batch, s.capacity, s.chunk, s.page, s.sliding}),
          make_shape({0, s.layers}),
          s.qo_heads, s.kv_heads, s.dim, s.dim,
          make_shape(std::vector<int64_t>(static_cast<size_t>(s.layers), 0)),
          int64_t{0}, int64_t{0}, int64_t{1}, int64_t{10000}, int64_t{0},
          NDArray::empty({}, kF32, graphrt::cpu()),
          k.transpose_append, std::monostate(),
          tir(k.prefill_ragged), tir(k.prefill_paged), tir(k.decode_paged), tir(k.prefill_paged), tir(k.decode_paged),
          make_tuple({}), make_tuple({}), make_tuple({}), make_tuple({k.merge}),
          k.split_rotary, k.copy_single_page, k.debug_get_kv, k.compact_copy};
}

NDArray random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  NDArray t = NDArray::empty(shape, kF32, graphrt::cpu());
  std::uniform_real_distribution<float> u(-1, 1);
  float* p = static_cast<float*>(t->data);
  for (size_t i = 0; i < t.nbytes() / 4; ++i) p[i] = u(rng);
  return t;
}

// Each sequence's tokens as the model fed them (per layer: K and V rows), and
// attention over them computed directly.
class History {
 public:
  explicit History(const CacheShape& s) : s_(s) {}
  using Rows = std::vector<std::vector<float>>;  // per token: kv_heads * dim
  Rows& k(int64_t layer, int64_t seq) { return k_[{layer, seq}]; }
  Rows& v(int64_t layer, int64_t seq) { return v_[{layer, seq}]; }
  void fork(int64_t parent, int64_t child, int64_t pos) {
    for (int64_t l = 0; l < s_.layers; ++l) {
      k(l, child).assign(k(l, parent).begin(), k(l, parent).begin() + pos);
      v(l, child).assign(v(l, parent).begin(), v(l, parent).begin() + pos);
    }
  }
  void pop(int64_t seq, int64_t n) {
    for (int64_t l = 0; l < s_.layers; ++l) {
      k(l, seq).resize(k(l, seq).size() - n);
      v(l, seq).resize(v(l, seq).size() - n);
    }
  }
  // The expected output of one query row (qo_heads * dim) over the whole history.
  std::vector<float> attend(int64_t layer, int64_t seq, const float* q, double scale) {
    std::vector<float> out(static_cast<size_t>(s_.qo_heads * s_.dim));
    const Rows& ks = k(layer, seq);
    const Rows& vs = v(layer, seq);
    for (int64_t h = 0; h < s_.qo_heads; ++h) {
      const int64_t kh = h / (s_.qo_heads / s_.kv_heads);
      std::vector<double> w;
      double m = -INFINITY;
      for (const auto& kr : ks) {
        double dot = 0;
        for (int64_t d = 0; d < s_.dim; ++d) dot += double(q[h * s_.dim + d]) * kr[size_t(kh * s_.dim + d)];
        w.push_back(dot * scale);
        m = std::max(m, w.back());
      }
      double sum = 0;
      for (double& x : w) sum += (x = std::exp(x - m));
      for (int64_t d = 0; d < s_.dim; ++d) {
        double acc = 0;
        for (size_t j = 0; j < w.size(); ++j) acc += w[j] * vs[j][size_t(kh * s_.dim + d)];
        out[size_t(h * s_.dim + d)] = float(acc / sum);
      }
    }
    return out;
  }

 private:
  CacheShape s_;
  std::map<std::pair<int64_t, int64_t>, Rows> k_, v_;
};

class KvCache : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels_ = graphrt_test::kv_reference_kernels(shape_.page);
    cache_ = call("vm.builtin.paged_attention_kv_cache_create", create_args(kernels_, shape_));
  }

  // One forward pass on every layer with random q/k/v; checks each output row
  // against attention over the sequence's history.
  void forward(const std::vector<int64_t>& ids, const std::vector<int64_t>& lengths) {
    call("vm.builtin.kv_state_begin_forward", {cache_, make_shape(ids), make_shape(lengths)});
    int64_t total = 0;
    for (int64_t n : lengths) total += n;
    const int64_t fused = shape_.qo_heads + 2 * shape_.kv_heads, d = shape_.dim;
    for (int64_t layer = 0; layer < shape_.layers; ++layer) {
      const NDArray qkv = random_tensor({total, fused, d}, rng_);
      const NDArray out = NDArray::empty({total, shape_.qo_heads, d}, kF32, graphrt::cpu());
      call("vm.builtin.attention_kv_cache_attention_with_fused_qkv", {cache_, layer, scale_, qkv, out});
      const float* x = static_cast<const float*>(qkv->data);
      const float* o = static_cast<const float*>(out->data);
      int64_t row = 0;
      for (size_t i = 0; i < ids.size(); ++i) {
        for (int64_t t = 0; t < lengths[i]; ++t, ++row) {
          const float* r = x + row * fused * d;
          history_.k(layer, ids[i]).emplace_back(r + shape_.qo_heads * d, r + (shape_.qo_heads + shape_.kv_heads) * d);
          history_.v(layer, ids[i]).emplace_back(r + (shape_.qo_heads + shape_.kv_heads) * d, r + fused * d);
          const std::vector<float> want = history_.attend(layer, ids[i], r, scale_);
          for (size_t j = 0; j < want.size(); ++j)
            ASSERT_NEAR(o[row * shape_.qo_heads * d + int64_t(j)], want[j], 1e-5)
                << "layer " << layer << " sequence " << ids[i] << " token " << t;
        }
      }
    }
    call("vm.builtin.kv_state_end_forward", {cache_});
  }

  int64_t total_length() { return std::get<int64_t>(call("vm.builtin.attention_kv_cache_get_total_sequence_length", {cache_})); }
  int64_t free_pages() { return std::get<int64_t>(call("vm.builtin.attention_kv_cache_get_num_available_pages", {cache_})); }

  CacheShape shape_;
  KvReferenceKernels kernels_;
  Value cache_;
  std::mt19937 rng_{7};
  double scale_ = 0.5;
  History history_{shape_};
};

TEST_F(KvCache, AttentionMatchesEachSequencesWholeHistory) {
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{0}});
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{1}});
  forward({0, 1}, {5, 3});   // prefill: ragged attention only
  forward({0, 1}, {1, 1});   // decode
  forward({0}, {11});        // prefill over 6 cached tokens: ragged + paged, merged
  EXPECT_EQ(total_length(), 21);
  call("vm.builtin.kv_state_fork_sequence", {cache_, int64_t{0}, int64_t{2}, int64_t{10}});  // inside a page
  history_.fork(0, 2, 10);
  forward({0, 2}, {1, 1});   // two depths: the shared prefix, then each sequence's own block
  forward({2, 1}, {3, 2});
  call("vm.builtin.kv_state_popn", {cache_, int64_t{0}, int64_t{3}});
  history_.pop(0, 3);
  forward({0}, {1});
  call("vm.builtin.kv_state_fork_sequence", {cache_, int64_t{2}, int64_t{3}, int64_t{-1}});
  history_.fork(2, 3, static_cast<int64_t>(history_.k(0, 2).size()));
  forward({3, 2, 0}, {1, 1, 2});
  EXPECT_EQ(total_length(), 18 + 6 + 15 + 15);  // sequences 0 1 2 3
}

TEST_F(KvCache, DecodeAppendsBeforeAttentionAndPrefillAfter) {
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{0}});
  kernels_.calls->clear();
  forward({0}, {5});
  // Nothing cached yet: the ragged kernel alone, then the new K/V go into the pages (each layer).
  EXPECT_EQ(*kernels_.calls, (std::vector<std::string>{"split_rotary", "prefill_ragged", "transpose_append",
                                                       "split_rotary", "prefill_ragged", "transpose_append"}));
  kernels_.calls->clear();
  forward({0}, {3});  // the 5 cached tokens through the paged kernel, merged with the ragged result
  EXPECT_EQ(*kernels_.calls, (std::vector<std::string>{"split_rotary", "prefill_ragged", "prefill_paged", "merge",
                                                       "transpose_append", "split_rotary", "prefill_ragged",
                                                       "prefill_paged", "merge", "transpose_append"}));
  kernels_.calls->clear();
  forward({0}, {1});
  EXPECT_EQ(*kernels_.calls, (std::vector<std::string>{"split_rotary", "transpose_append", "decode_paged",
                                                       "split_rotary", "transpose_append", "decode_paged"}));
}

TEST_F(KvCache, DebugGetKVReadsWhatWasAppended) {
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{0}});
  forward({0}, {6});
  const NDArray k = NDArray::empty({shape_.layers, 3, shape_.kv_heads, shape_.dim}, kF32, graphrt::cpu());
  const NDArray v = NDArray::empty({shape_.layers, 3, shape_.kv_heads, shape_.dim}, kF32, graphrt::cpu());
  call("vm.builtin.attention_kv_cache_debug_get_kv", {cache_, int64_t{0}, int64_t{2}, int64_t{5}, k, v});
  for (int64_t l = 0; l < shape_.layers; ++l)
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t d = 0; d < shape_.dim; ++d) {
        EXPECT_EQ(static_cast<float*>(k->data)[(l * 3 + t) * shape_.dim + d], history_.k(l, 0)[size_t(t + 2)][size_t(d)]);
        EXPECT_EQ(static_cast<float*>(v->data)[(l * 3 + t) * shape_.dim + d], history_.v(l, 0)[size_t(t + 2)][size_t(d)]);
      }
}

// One graphrt::Error naming the builtin, the argument where there is one, and the kind.
graphrt::Error error_of(const std::string& name, std::vector<Value> args) {
  try {
    call(name, std::move(args));
  } catch (const graphrt::Error& e) {
    return e;
  }
  ADD_FAILURE() << name << " did not fail";
  return graphrt::Error("none");
}

void expect_error(const graphrt::Error& e, const std::string& builtin, const std::string& argument,
                  graphrt::ErrorKind kind) {
  EXPECT_EQ(e.kind(), kind) << e.what();
  EXPECT_NE(std::string(e.what()).find(builtin), std::string::npos) << e.what();
  if (!argument.empty()) {
    EXPECT_NE(std::string(e.what()).find(argument), std::string::npos) << e.what();
  }
}

TEST_F(KvCache, BadSequenceIdsNameTheBuiltinAndArgument) {
  using graphrt::ErrorKind;
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{0}});
  expect_error(error_of("vm.builtin.kv_state_add_sequence", {cache_, int64_t{0}}), "vm.builtin.kv_state_add_sequence",
               "seq_id (argument 1)", ErrorKind::kInvalidArgument);
  expect_error(error_of("vm.builtin.kv_state_remove_sequence", {cache_, int64_t{9}}),
               "vm.builtin.kv_state_remove_sequence", "seq_id (argument 1)", ErrorKind::kNotFound);
  expect_error(error_of("vm.builtin.kv_state_begin_forward", {cache_, make_shape({9}), make_shape({1})}),
               "vm.builtin.kv_state_begin_forward", "seq_ids (argument 1)", ErrorKind::kNotFound);
  expect_error(error_of("vm.builtin.kv_state_begin_forward", {cache_, make_shape({0, 0}), make_shape({1, 1})}),
               "vm.builtin.kv_state_begin_forward", "seq_ids (argument 1)", ErrorKind::kInvalidArgument);
  expect_error(error_of("vm.builtin.kv_state_fork_sequence", {cache_, int64_t{0}, int64_t{1}, int64_t{3}}),
               "vm.builtin.kv_state_fork_sequence", "fork_pos (argument 3)", ErrorKind::kOutOfRange);
  expect_error(error_of("vm.builtin.kv_state_popn", {cache_, int64_t{0}, int64_t{1}}), "vm.builtin.kv_state_popn",
               "n (argument 2)", ErrorKind::kOutOfRange);
  expect_error(error_of("vm.builtin.kv_state_add_sequence", {int64_t{3}, int64_t{1}}),
               "vm.builtin.kv_state_add_sequence", "argument 0", ErrorKind::kTypeMismatch);
}

TEST_F(KvCache, AForwardPastCapacityFailsAndLeavesTheCacheAsItWas) {
  using graphrt::ErrorKind;
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{0}});
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{1}});
  forward({0}, {30});  // 8 of the 17 pages
  forward({1}, {30});  // 8 more
  const int64_t pages = free_pages();
  expect_error(error_of("vm.builtin.kv_state_begin_forward", {cache_, make_shape({0}), make_shape({12})}),
               "vm.builtin.kv_state_begin_forward", "pages", ErrorKind::kResourceExhausted);
  EXPECT_EQ(free_pages(), pages);
  EXPECT_EQ(total_length(), 60);
  expect_error(error_of("vm.builtin.kv_state_begin_forward", {cache_, make_shape({0, 1}), make_shape({20, 20})}),
               "vm.builtin.kv_state_begin_forward", "prefill chunk size", ErrorKind::kResourceExhausted);
  forward({0, 1}, {1, 1});  // what fits still runs
}

TEST_F(KvCache, AttentionOutsideAForwardOrPastTheLayersIsRefused) {
  using graphrt::ErrorKind;
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{0}});
  const NDArray qkv = NDArray::empty({1, 4, 4}, kF32, graphrt::cpu());
  const NDArray out = NDArray::empty({1, 2, 4}, kF32, graphrt::cpu());
  const std::string attn = "vm.builtin.attention_kv_cache_attention_with_fused_qkv";
  expect_error(error_of(attn, {cache_, int64_t{0}, 1.0, qkv, out}), attn, "begin_forward",
               ErrorKind::kFailedPrecondition);
  call("vm.builtin.kv_state_begin_forward", {cache_, make_shape({0}), make_shape({1})});
  expect_error(error_of(attn, {cache_, int64_t{2}, 1.0, qkv, out}), attn, "layer_id (argument 1)",
               ErrorKind::kOutOfRange);
  expect_error(error_of(attn, {cache_, int64_t{-1}, 1.0, qkv, out}), attn, "layer_id (argument 1)",
               ErrorKind::kOutOfRange);
  const NDArray bad = NDArray::empty({1, 3, 4}, kF32, graphrt::cpu());
  expect_error(error_of(attn, {cache_, int64_t{0}, 1.0, bad, out}), attn, "qkv (argument 3)",
               ErrorKind::kInvalidArgument);
  call("vm.builtin.kv_state_add_sequence", {cache_, int64_t{1}});  // changes the batch: the pass is over
  expect_error(error_of(attn, {cache_, int64_t{0}, 1.0, qkv, out}), attn, "begin_forward",
               ErrorKind::kFailedPrecondition);
}

TEST(KvCacheCreate, WhatTheCacheDoesNotDoIsRefusedNamingTheArgument) {
  using graphrt::ErrorKind;
  const KvReferenceKernels k = graphrt_test::kv_reference_kernels(4);
  const std::string create = "vm.builtin.paged_attention_kv_cache_create";
  CacheShape sliding;
  sliding.sliding = 1;
  expect_error(error_of(create, create_args(k, sliding)), create, "cache config (argument 0)", ErrorKind::kUnsupported);
  std::vector<Value> few = create_args(k, CacheShape());
  few.resize(20);
  expect_error(error_of(create, few), create, "28 arguments", ErrorKind::kInvalidArgument);
  std::vector<Value> flash = create_args(k, CacheShape());
  flash[16] = make_tuple({std::make_shared<const std::string>("flashinfer"), k.prefill_paged, k.prefill_paged});
  expect_error(error_of(create, flash), create, "f_attention_prefill (argument 16)", ErrorKind::kUnsupported);
  CacheShape huge;
  huge.capacity = int64_t{1} << 31;
  huge.page = 1;
  expect_error(error_of(create, create_args(k, huge)), create, "cache config (argument 0)",
               ErrorKind::kResourceExhausted);
  CacheShape wide;
  wide.dim = int64_t{1} << 20;
  wide.capacity = int64_t{1} << 20;
  expect_error(error_of(create, create_args(k, wide)), create, "2^40 bytes", ErrorKind::kResourceExhausted);
  std::vector<Value> heads = create_args(k, CacheShape());
  heads[3] = int64_t{3};
  expect_error(error_of(create, heads), create, "num_kv_heads (argument 3)", ErrorKind::kInvalidArgument);
}

}  // namespace
