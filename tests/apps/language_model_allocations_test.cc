// graphrt::LanguageModel::step allocates nothing in a steady decode (issue #52): the process's
// malloc family is replaced here (the program's definitions interpose on libgraphrt's and
// libstdc++'s calls, operator new included, which calls malloc), every allocation of any
// thread is counted between two points, and N decode steps after a warm-up must count zero.
// Run on the MLC fixture (embed, batch_decode / decode, the KV cache's begin/end_forward) with
// 1 to 4 sequences, through the C API's graphrt_lm_step too, and on the token-id library
// relax_tiny_llm_gqa; the tokens are each step's
// argmax, and the first steps' tokens are case.json's greedy completion (the steps are real).
//
// GRAPHRT_ALLOCATION_TRACE=1 prints the call stack of each allocation counted (to find one).
#include <execinfo.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fixture_cases.h"
#include "graphrt/c_api.h"
#include "graphrt/language_model.h"
#include "graphrt/session.h"
#include "mlc_scenario.h"
#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GRAPHRT_COUNTS_ALLOCATIONS 0  // the sanitizers own malloc
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define GRAPHRT_COUNTS_ALLOCATIONS 0
#else
#define GRAPHRT_COUNTS_ALLOCATIONS 1
#endif
#else
#define GRAPHRT_COUNTS_ALLOCATIONS 1
#endif

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
bool g_trace = false;
thread_local bool t_in_trace = false;

[[maybe_unused]] void note_allocation() {  // unused where a sanitizer owns malloc
  if (!g_counting.load(std::memory_order_relaxed)) return;
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (g_trace && !t_in_trace) {
    t_in_trace = true;  // backtrace() must not count itself
    void* frames[24];
    const int n = backtrace(frames, 24);
    static const char kLine[] = "---- allocation during a counted step:\n";
    (void)!write(2, kLine, sizeof kLine - 1);
    backtrace_symbols_fd(frames, n, 2);  // writes without allocating
    t_in_trace = false;
  }
}

}  // namespace

#if GRAPHRT_COUNTS_ALLOCATIONS
// glibc's own allocator under its exported names: what these forward to.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

void* malloc(size_t n) {
  note_allocation();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  note_allocation();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  note_allocation();
  return __libc_realloc(p, n);
}
void free(void* p) { __libc_free(p); }
void* memalign(size_t alignment, size_t n) {
  note_allocation();
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  note_allocation();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  note_allocation();
  void* p = __libc_memalign(alignment, n);
  if (!p && n) return ENOMEM;
  *out = p;
  return 0;
}
}  // extern "C"
#endif

namespace {

using graphrt::LanguageModel;
using graphrt::SequenceStep;
using graphrt::StepLogits;

int32_t argmax(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (row[i] > row[best]) best = i;
  return static_cast<int32_t>(best);
}

// Allocations made by `steps` decode steps of `batch` (each token the previous step's argmax,
// written into the same SequenceStep vectors), after `warmup` steps; every step's tokens in
// `tokens` (per sequence).
long allocations_of_decode(LanguageModel& lm, std::vector<SequenceStep>& batch, int warmup, int steps,
                           std::vector<std::vector<int32_t>>* tokens) {
  StepLogits logits;
  long counted = 0;
  for (int i = 0; i < warmup + steps; ++i) {
    const bool count = i >= warmup;
    if (count) g_counting.store(true);
    logits = lm.step(batch);
    if (count) g_counting.store(false);
    for (size_t r = 0; r < batch.size(); ++r) {
      batch[r].tokens[0] = argmax(logits.row(r), logits.vocab_size());
      if (tokens) (*tokens)[r].push_back(batch[r].tokens[0]);  // outside the count
    }
  }
  counted = g_allocations.exchange(0);
  return counted;
}

class StepAllocations : public ::testing::Test {
 protected:
  void SetUp() override {
#if !GRAPHRT_COUNTS_ALLOCATIONS
    GTEST_SKIP() << "a sanitizer replaces malloc; the count runs in the normal build";
#endif
    g_trace = std::getenv("GRAPHRT_ALLOCATION_TRACE") != nullptr;
    if (g_trace) {
      void* warm[2];
      backtrace(warm, 2);  // loads libgcc's unwinder before any count
    }
  }
};

TEST_F(StepAllocations, MlcFolderDecodeOfOneToFourSequencesAllocatesNothing) {
  GRAPHRT_REQUIRE_FIXTURES();
  const nlohmann::json c = graphrt_test::mlc::package_case();
  graphrt::Session session(graphrt::runtime(), graphrt::cpu());
  LanguageModel lm(session, graphrt_test::mlc::package_dir(), graphrt_test::mlc::case_options());
  const nlohmann::json& greedy = c["greedy_completions"];
  int64_t next_id = 0;
  for (size_t n = 1; n <= 4; ++n) {
    // Sequence r's prompt: greedy completion r's (cycled), prefilled together in one step.
    std::vector<SequenceStep> prefill;
    for (size_t r = 0; r < n; ++r) {
      const nlohmann::json& g = greedy[r % greedy.size()];
      lm.add_sequence(next_id);
      prefill.push_back({next_id++, graphrt_test::mlc::ids_of(g["prompt_ids"])});
    }
    const StepLogits first = lm.step(prefill);
    std::vector<SequenceStep> batch;
    std::vector<std::vector<int32_t>> tokens(n);
    for (size_t r = 0; r < n; ++r) {
      batch.push_back({prefill[r].id, {argmax(first.row(r), first.vocab_size())}});
      tokens[r].push_back(batch[r].tokens[0]);
    }
    EXPECT_EQ(0, allocations_of_decode(lm, batch, 4, 40, &tokens)) << n << " sequences";
    // The steps were real: each sequence's first greedy tokens are TVM's (batched or alone,
    // the argmax is the same for this fixture's completions).
    for (size_t r = 0; r < n; ++r) {
      const std::vector<int32_t> want = graphrt_test::mlc::ids_of(greedy[r % greedy.size()]["output_ids"]);
      ASSERT_GE(tokens[r].size(), want.size());
      EXPECT_EQ(want, std::vector<int32_t>(tokens[r].begin(), tokens[r].begin() + want.size()))
          << "sequence " << r << " of " << n;
    }
    for (const SequenceStep& s : batch) lm.remove_sequence(s.id);
  }
}

TEST_F(StepAllocations, TokenIdLibraryDecodeAllocatesNothing) {
  const char* const kCase = "relax-ffi/relax_tiny_llm_gqa";
  GRAPHRT_REQUIRE_FIXTURES();
  const nlohmann::json c = graphrt_test::case_json(kCase)["cache_config"];
  graphrt::LanguageModelOptions o;
  o.max_batch_size = c["max_batch_size"].get<int64_t>();
  o.max_total_seq_len = c["max_total_seq_len"].get<int64_t>();
  o.prefill_chunk_size = c["prefill_chunk_size"].get<int64_t>();
  o.page_size = c["page_size"].get<int64_t>();
  graphrt::ModelSource source;
  source.path = graphrt_test::fixture_path(std::string(kCase) + "/deploy_relax.so");
  graphrt::Session session(graphrt::runtime(), graphrt::cpu());
  LanguageModel lm(*session.load(source), o);
  lm.add_sequence(0);
  const StepLogits first = lm.step({{0, {24, 3, 56, 72, 0}}});
  std::vector<SequenceStep> batch{{0, {argmax(first.row(0), first.vocab_size())}}};
  const int64_t room = lm.max_sequence_length() - lm.sequence_length(0);
  const int steps = static_cast<int>(std::min<int64_t>(room - 4, 24));
  ASSERT_GT(steps, 4);
  EXPECT_EQ(0, allocations_of_decode(lm, batch, 4, steps, nullptr));
}

TEST_F(StepAllocations, CApiStepOfADecodeAllocatesNothing) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt_lm_t lm = nullptr;
  ASSERT_EQ(0, graphrt_lm_open(graphrt_test::mlc::package_dir().c_str(), nullptr, 0, 0, &lm)) << TVMGetLastError();
  int64_t vocab = 0;
  ASSERT_EQ(0, graphrt_lm_vocab_size(lm, &vocab));
  const int64_t ids[2] = {0, 1};
  const int32_t prompts[6] = {464, 3139, 286, 7454, 2402, 257};
  const int64_t offsets[3] = {0, 3, 6};
  const float* logits = nullptr;
  for (int64_t id : ids) ASSERT_EQ(0, graphrt_lm_add_sequence(lm, id));
  ASSERT_EQ(0, graphrt_lm_step(lm, 2, ids, prompts, offsets, &logits)) << TVMGetLastError();
  int32_t next[2];
  for (int i = 0; i < 4 + 30; ++i) {
    for (int r = 0; r < 2; ++r) next[r] = argmax(logits + r * vocab, vocab);
    const bool count = i >= 4;
    if (count) g_counting.store(true);
    const int rc = graphrt_lm_step(lm, 2, ids, next, nullptr, &logits);
    if (count) g_counting.store(false);
    ASSERT_EQ(0, rc) << TVMGetLastError();
  }
  EXPECT_EQ(0, g_allocations.exchange(0));
  graphrt_lm_free(lm);
}

}  // namespace
