// One request's generation, fed logits step by step.
#include "graphrt/text_generation.h"

#include <algorithm>

#include "graphrt/error.h"
#include "llm/generation/stop_strings.h"

namespace graphrt {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kNone: break;
  }
  return "";
}

namespace {

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  for (const std::string& s : b) {
    if (std::find(a.begin(), a.end(), s) == a.end()) a.push_back(s);
  }
  return a;
}

std::vector<int32_t> joined(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  for (int32_t t : b) {
    if (std::find(a.begin(), a.end(), t) == a.end()) a.push_back(t);
  }
  return a;
}

}  // namespace

struct TextGeneration::State {
  State(const Tokenizer& tokenizer, GenerationConfig config, int64_t vocab_size, std::vector<std::string> extra_stops,
        std::vector<int32_t> extra_stop_ids, int64_t token_limit, int64_t active_vocab_size)
      : sampler(config, vocab_size, active_vocab_size),
        decoder(tokenizer),
        stops(joined(config.stop, extra_stops)),
        stop_ids(joined(config.stop_token_ids, extra_stop_ids)),
        token_limit(token_limit) {}

  void emit(const std::string& text, const TextCallback& on_text) {
    const std::string released = stops.push(text);
    if (released.empty()) return;
    result.text += released;
    if (on_text) on_text(released);
  }

  void finish(FinishReason reason, const TextCallback& on_text) {
    emit(decoder.finish(), on_text);
    if (stops.stopped()) {
      reason = FinishReason::kStop;
    } else {
      const std::string tail = stops.flush();
      result.text += tail;
      if (on_text && !tail.empty()) on_text(tail);
    }
    result.finish_reason = reason;
  }

  bool budget_spent() const {
    const int64_t n = static_cast<int64_t>(result.tokens.size());
    const int64_t max_tokens = sampler.config().max_tokens;
    return (max_tokens > 0 && n >= max_tokens) || (token_limit > 0 && n >= token_limit);
  }

  Sampler sampler;
  StreamDecoder decoder;
  StopStrings stops;
  std::vector<int32_t> stop_ids;
  int64_t token_limit;
  GenerationResult result;
};

TextGeneration::TextGeneration(const Tokenizer& tokenizer, GenerationConfig config, int64_t vocab_size,
                               std::vector<std::string> extra_stops, std::vector<int32_t> extra_stop_ids,
                               int64_t token_limit, int64_t active_vocab_size)
    : state_(std::make_unique<State>(tokenizer, std::move(config), vocab_size, std::move(extra_stops),
                                     std::move(extra_stop_ids), token_limit, active_vocab_size)) {}
TextGeneration::~TextGeneration() = default;
TextGeneration::TextGeneration(TextGeneration&&) noexcept = default;

bool TextGeneration::finished() const { return state_->result.finish_reason != FinishReason::kNone; }

GenerationResult& TextGeneration::result() { return state_->result; }

std::optional<int32_t> TextGeneration::step(const float* logits, size_t count, const TextCallback& on_text) {
  State& s = *state_;
  GRAPHRT_CHECK_KIND(!finished(), ErrorKind::kFailedPrecondition, "the generation is already over");
  const SampledToken sampled = s.sampler.sample(logits, count);
  s.result.tokens.push_back(sampled.token);
  if (s.sampler.config().logprobs) s.result.sampled.push_back(sampled);
  if (std::find(s.stop_ids.begin(), s.stop_ids.end(), sampled.token) != s.stop_ids.end()) {
    s.finish(FinishReason::kStop, on_text);
    return std::nullopt;
  }
  s.emit(s.decoder.push(sampled.token), on_text);
  if (s.stops.stopped()) {
    s.finish(FinishReason::kStop, on_text);
    return std::nullopt;
  }
  if (s.budget_spent()) {
    s.finish(FinishReason::kLength, on_text);
    return std::nullopt;
  }
  return sampled.token;
}

}  // namespace graphrt
