// One request's sampler on the host, as MLC-LLM's CPU sampler: per step, logit bias, then the
// penalties over the tokens this request has sampled, then softmax(logits / temperature)
// (greedy at 0), top_k, top_p, and one uniform draw walking the token ids in order. The draws
// come from the request's own generator (std::mt19937_64 seeded by GenerationConfig::seed):
// the same seed and logits give the same tokens whatever else is sampled beside it.
//
//   graphrt::Sampler sampler(config, vocab_size);
//   graphrt::SampledToken next = sampler.sample(logits, vocab_size);  // also counts it
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "graphrt/generation_config.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;  // ln(max(p, 1e-10)) in the final distribution
};

struct SampledToken {
  int32_t token = 0;
  float logprob = 0.0f;
  // The top_logprobs most probable tokens, most probable first (ties: lower id first); empty
  // unless the config asks for logprobs.
  std::vector<TokenLogprob> top_logprobs;
};

class Sampler {
 public:
  // Validates the config against the vocabulary (Error naming the field). Ids at or past
  // active_vocab_size (<= 0: all of them) are never sampled.
  Sampler(GenerationConfig config, int64_t vocab_size, int64_t active_vocab_size = 0);

  // Samples the next token from one row of float32 logits (`count` = the vocabulary size) and
  // records it for the penalties. Throws Error for a row of another width.
  SampledToken sample(const float* logits, size_t count);

  // The distribution the next sample() would draw from (bias, penalties, temperature, top_k,
  // top_p applied), without drawing: for tests and logprob consumers.
  std::vector<double> distribution(const float* logits, size_t count) const;

  // How many times each token was sampled so far (what the penalties count).
  const std::vector<int32_t>& sampled_counts() const { return counts_; }
  const GenerationConfig& config() const { return config_; }

 private:
  GenerationConfig config_;
  int64_t vocab_size_;
  int64_t active_vocab_size_;
  std::mt19937_64 generator_;
  std::vector<int32_t> counts_;
  std::vector<int32_t> sampled_;  // the distinct tokens sampled, for the penalties' loop
};

}  // namespace graphrt

#pragma GCC visibility pop
