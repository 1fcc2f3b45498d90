// Load to ready of an MLC-LLM model folder through graphrt::LanguageModel: from nothing loaded
// to the logits of a first one-token prefill (library, VM, _metadata, config, weights of the
// tensor cache, KV cache). Prints one JSON line; bench/mlc_load_bench.py runs it beside TVM
// v0.26's tensor_cache.load + param_array path.
//
// usage: mlc_load_bench FOLDER [RUNS]   (RUNS in this process after a first, cold-ish one)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "graphrt/language_model.h"
#include "graphrt/session.h"

namespace {

double ready_ms(const std::string& folder) {
  const auto t0 = std::chrono::steady_clock::now();
  graphrt::Session session(graphrt::runtime(), graphrt::cpu());
  graphrt::LanguageModel lm(session, folder);
  lm.add_sequence(0);
  const graphrt::StepLogits l = lm.step({{0, {464}}});
  const auto t1 = std::chrono::steady_clock::now();
  if (l.rows() != 1) std::fprintf(stderr, "no logits\n");
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FOLDER [RUNS]\n", argv[0]);
    return 2;
  }
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  try {
    const double first = ready_ms(argv[1]);
    std::vector<double> again;
    for (int i = 0; i < runs; ++i) again.push_back(ready_ms(argv[1]));
    std::sort(again.begin(), again.end());
    std::printf("{\"first_ms\": %.3f, \"median_ms\": %.3f, \"runs\": %d}\n", first, again[again.size() / 2], runs);
  } catch (const graphrt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
