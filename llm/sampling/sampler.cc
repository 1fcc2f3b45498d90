#include "graphrt/sampler.h"

#include <string>

#include "graphrt/error.h"
#include "llm/sampling/logit_processing.h"
#include "llm/sampling/token_distribution.h"
#include "llm/sampling/token_draw.h"

namespace graphrt {
namespace {

std::mt19937_64 make_generator(const std::optional<int64_t>& seed) {
  if (seed) return std::mt19937_64(static_cast<uint64_t>(*seed));
  std::random_device device;
  return std::mt19937_64((static_cast<uint64_t>(device()) << 32) ^ device());
}

}  // namespace

Sampler::Sampler(GenerationConfig config, int64_t vocab_size, int64_t active_vocab_size)
    : config_(std::move(config)),
      vocab_size_(vocab_size),
      active_vocab_size_(active_vocab_size > 0 && active_vocab_size < vocab_size ? active_vocab_size
                                                                                   : vocab_size),
      generator_(make_generator(config_.seed)),
      counts_(static_cast<size_t>(vocab_size > 0 ? vocab_size : 0), 0) {
  GRAPHRT_CHECK(vocab_size > 0, "a sampler needs a vocabulary, got size " + std::to_string(vocab_size));
  validate_generation_config(config_, vocab_size);
}

std::vector<double> Sampler::distribution(const float* logits, size_t count) const {
  GRAPHRT_CHECK(count == static_cast<size_t>(vocab_size_),
                "logits of " + std::to_string(count) + " tokens for a vocabulary of " +
                    std::to_string(vocab_size_));
  std::vector<float> row(logits, logits + count);
  apply_logit_bias(row, config_.logit_bias);
  apply_penalties(row, sampled_, counts_, config_.presence_penalty, config_.frequency_penalty,
                  config_.repetition_penalty);
  std::vector<double> probs = softmax_with_temperature(row, config_.temperature,
                                                       static_cast<size_t>(active_vocab_size_));
  keep_top_k(probs, config_.top_k);
  keep_top_p(probs, config_.top_p);
  return probs;
}

SampledToken Sampler::sample(const float* logits, size_t count) {
  const std::vector<double> probs = distribution(logits, count);
  // One draw per token, greedy or not: a request's later draws do not depend on its settings.
  SampledToken sampled;
  sampled.token = draw_token(probs, uniform_draw(generator_));
  if (config_.logprobs) {
    sampled.logprob = token_logprob(probs[sampled.token]);
    sampled.top_logprobs = top_logprobs(probs, config_.top_logprobs);
  }
  if (counts_[sampled.token]++ == 0) sampled_.push_back(sampled.token);
  return sampled;
}

}  // namespace graphrt
