// The decode step of an MLC-LLM folder in-process through graphrt::LanguageModel::step: the
// workload of bench/mlc_decode_step_bench.py's Python children (sequences 0..B-1, the prompt
// [11, 22, 33, 44] each in one batch_prefill, then STEPS batch_decode steps, each token the
// previous step's argmax), timed per step (LanguageModel::step alone: embed, begin_forward,
// batch_decode, end_forward; the logits are the model's own rows on the host). Prints one JSON
// line: the median step, its 10th and 90th percentiles, and the last tokens (which the Python
// driver compares with TVM's).
//
// usage: mlc_decode_step_bench FOLDER STEPS BATCH
//        mlc_decode_step_bench LIBRARY.so STEPS 1   (a token-id library such as
//        relax_tiny_llm_gqa/deploy_relax.so: its prefill/decode, cache of 1 x 64 tokens, chunk 16)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/language_model.h"
#include "graphrt/session.h"

namespace {

int32_t argmax(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (row[i] > row[best]) best = i;
  return static_cast<int32_t>(best);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s FOLDER STEPS BATCH\n", argv[0]);
    return 2;
  }
  const int steps = std::max(1, std::atoi(argv[2]));
  const int batch = std::max(1, std::atoi(argv[3]));
  try {
    graphrt::Session session(graphrt::runtime(), graphrt::cpu());
    const std::string path = argv[1];
    std::unique_ptr<graphrt::LanguageModel> owned;
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0) {
      graphrt::ModelSource source;
      source.path = path;
      graphrt::LanguageModelOptions o;  // relax_tiny_llm_gqa's case.json cache_config
      o.max_batch_size = 1;
      o.max_total_seq_len = 64;
      o.prefill_chunk_size = 16;
      owned = std::make_unique<graphrt::LanguageModel>(*session.load(source), o);
    } else {
      owned = std::make_unique<graphrt::LanguageModel>(session, path);
    }
    graphrt::LanguageModel& lm = *owned;
    std::vector<graphrt::SequenceStep> step;
    for (int s = 0; s < batch; ++s) {
      lm.add_sequence(s);
      step.push_back({s, {11, 22, 33, 44}});
    }
    graphrt::StepLogits logits = lm.step(step);
    for (int s = 0; s < batch; ++s) step[s].tokens.assign(1, argmax(logits.row(s), logits.vocab_size()));
    std::vector<double> ms;
    for (int i = 0; i < steps; ++i) {
      logits = graphrt::StepLogits();  // the rows go back to the model's storage, as Python drops them
      const auto t0 = std::chrono::steady_clock::now();
      logits = lm.step(step);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      for (int s = 0; s < batch; ++s) step[s].tokens[0] = argmax(logits.row(s), logits.vocab_size());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("{\"step_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, \"tokens\": [", ms[ms.size() / 2],
                ms[ms.size() / 10], ms[ms.size() * 9 / 10]);
    for (int s = 0; s < batch; ++s) std::printf(s ? ", %d" : "%d", step[s].tokens[0]);
    std::printf("]}\n");
  } catch (const graphrt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
