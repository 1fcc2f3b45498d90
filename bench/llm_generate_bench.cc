// Text generation on an MLC-LLM model folder, in-process (graphrt/text_generation.h): time to
// first token of a 128-token prompt (prefill + the first sample) and the decode step (one
// forward pass + one sample), greedy and sampled (temperature 0.8, top_p 0.9, top_k 40); and
// the host sampler alone on a row of the vocabulary's width.
// usage: llm_generate_bench FOLDER [DECODE_TOKENS] [REPEATS]
// Prints one JSON line per mode: ttft_ms (median of REPEATS), decode_step_ms (median of the
// runs' means), prompt_tokens.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <cstdlib>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/runtime.h"
#include "graphrt/text_generation.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_mode(graphrt::TextGenerator& gen, const std::string& prompt, const char* mode, graphrt::GenerationConfig config,
              int repeats) {
  std::vector<double> ttft, step;
  int64_t prompt_tokens = 0;
  for (int r = 0; r < repeats; ++r) {
    const graphrt::GenerationResult result = gen.generate(prompt, config);
    prompt_tokens = result.prompt_tokens;
    ttft.push_back(result.time_to_first_token_s * 1e3);
    if (result.tokens.size() > 1) step.push_back(result.decode_s * 1e3 / static_cast<double>(result.tokens.size() - 1));
  }
  std::printf("{\"mode\": \"%s\", \"prompt_tokens\": %lld, \"ttft_ms\": %.3f, \"decode_step_ms\": %.3f}\n", mode,
              static_cast<long long>(prompt_tokens), median(ttft), step.empty() ? 0.0 : median(step));
}

// The host sampler alone on one row of the vocabulary's width: microseconds per sample.
void run_sampler(int64_t vocab, const char* mode, graphrt::GenerationConfig config) {
  std::mt19937 random(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(static_cast<size_t>(vocab));
  for (float& l : logits) l = normal(random);
  graphrt::Sampler sampler(config, vocab);
  const int n = 200;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) sampler.sample(logits.data(), logits.size());
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / n;
  std::printf("{\"mode\": \"sampler %s\", \"vocab\": %lld, \"sample_us\": %.1f}\n", mode,
              static_cast<long long>(vocab), us);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: llm_generate_bench FOLDER [DECODE_TOKENS] [REPEATS]\n");
    return 2;
  }
  const int decode_tokens = argc > 2 ? std::atoi(argv[2]) : 64;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 9;
  try {
    graphrt::Session session(graphrt::runtime(), graphrt::cpu());
    graphrt::TextGenerator gen(session, argv[1]);
    // 128 tokens for GPT-2-style byte-level BPE: "the" then " the" 127 times; checked below.
    std::string prompt = "the";
    for (int i = 1; i < 128; ++i) prompt += " the";
    std::fprintf(stderr, "prompt: %zu tokens\n", gen.tokenizer().encode(prompt).size());
    graphrt::GenerationConfig config = gen.default_config();
    config.max_tokens = decode_tokens + 1;
    config.stop_token_ids.clear();
    config.seed = 1;
    config.temperature = 0;
    run_mode(gen, prompt, "greedy", config, repeats);
    config.temperature = 0.8;
    config.top_p = 0.9;
    config.top_k = 40;
    run_mode(gen, prompt, "sampled", config, repeats);
    run_sampler(gen.language_model().vocab_size(), "sampled", config);
    config.temperature = 0;
    run_sampler(gen.language_model().vocab_size(), "greedy", config);
  } catch (const graphrt::Error& e) {
    std::fprintf(stderr, "llm_generate_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
