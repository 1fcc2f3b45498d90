// The in-process baseline of graphrt-serve's generate endpoint: the same KV-cache model code the
// server runs (apps/serve/generation/kv_cache_model), timed step by step with no server around it.
// usage: generate_step_bench MODEL.so [TOKENS] [PROMPT_LEN]
// Prints one JSON line: prefill_us (the prompt), decode_p50_us and decode_mean_us over TOKENS decodes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "generation/kv_cache_model.h"
#include "graphrt/error.h"
#include "graphrt/session.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: generate_step_bench MODEL.so [TOKENS] [PROMPT_LEN]\n");
    return 2;
  }
  const int tokens = argc > 2 ? std::atoi(argv[2]) : 200;
  const int prompt_len = argc > 3 ? std::atoi(argv[3]) : 5;
  try {
    const std::shared_ptr<graphrt::Model> model =
        graphrt::Session(graphrt::runtime(), graphrt::cpu()).load(graphrt::ModelSource{argv[1], "", "", ""});
    graphrt_serve::GenerationConfig config;
    config.max_total_seq_len = 4096;
    graphrt_serve::KvCacheModel m(*model, config);
    using Clock = std::chrono::steady_clock;
    std::vector<int32_t> prompt;
    for (int i = 0; i < prompt_len; ++i) prompt.push_back((i * 37 + 24) % static_cast<int32_t>(m.vocab_size()));
    m.add_sequence(1);
    auto t0 = Clock::now();
    int32_t token = m.prefill(1, prompt);
    const double prefill_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    std::vector<double> steps;
    for (int i = 0; i < tokens; ++i) {
      t0 = Clock::now();
      token = m.decode(1, token);
      steps.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    double sum = 0;
    for (double s : steps) sum += s;
    std::sort(steps.begin(), steps.end());
    std::printf("{\"prefill_us\": %.1f, \"decode_p50_us\": %.1f, \"decode_mean_us\": %.1f, \"tokens\": %d}\n", prefill_us,
                steps[steps.size() / 2], sum / static_cast<double>(steps.size()), tokens);
  } catch (const graphrt::Error& e) {
    std::fprintf(stderr, "generate_step_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
