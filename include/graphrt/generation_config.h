// What one generation request asks for: sampling (MLC-LLM's CPU sampler, plus top_k), penalties,
// stops, the token budget, log-probabilities. Defaults come from the model's
// mlc-chat-config.json as MLC's engine takes them; a request's overrides come from JSON (the
// C API, Python's keyword arguments, a server's body) or are set field by field (C++, the CLI).
// Every entry point validates the same way: a value out of range, of the wrong type, or a key
// graphrt does not know is an Error whose "field" context names it. Nothing is ignored.
//
//   graphrt::GenerationConfig config = graphrt::generation_defaults_from_chat_config(text);
//   config = graphrt::parse_generation_config(R"({"temperature": 0.7, "seed": 3})", config);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/export.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

struct GenerationConfig {
  // 0 (below 1e-5) is greedy: the largest logit (each of k equal maxima 1/k, the draw picks).
  double temperature = 1.0;
  // Nucleus sampling; exactly 1 is off, 0 keeps the largest probability (and its ties).
  double top_p = 1.0;
  // Keeps the k most probable tokens (ties to the lower id); 0 is off. MLC has none.
  int64_t top_k = 0;
  // OpenAI's additive penalties over the tokens generated so far (the prompt excluded), in
  // [-2, 2]; then the multiplicative repetition penalty (> 0, 1 is off).
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  double repetition_penalty = 1.0;
  // Added to the logits of these token ids before the penalties; each in [-100, 100].
  std::map<int32_t, float> logit_bias;
  // The request's own generator: the same seed gives the same draws whatever else runs.
  // Absent: seeded from std::random_device.
  std::optional<int64_t> seed;
  // Tokens sampled at most (a stop token counts); -1: until a stop or the context's end.
  int64_t max_tokens = -1;
  // Generation ends before the first occurrence of any of these strings (none is emitted) or
  // at one of these token ids (not emitted). The model's conv_template adds its own.
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;
  // Log-probability of each sampled token in the final distribution, and of the top_logprobs
  // (0..5) most probable alternatives; top_logprobs needs logprobs.
  bool logprobs = false;
  int64_t top_logprobs = 0;
};

// The request fields parse_generation_config knows, in their JSON spelling.
const std::vector<std::string>& generation_config_fields();

// Throws Error (invalid argument, "field" context) for the first value out of range. With a
// vocabulary size (> 0), token ids (logit_bias, stop_token_ids) are checked against it too.
void validate_generation_config(const GenerationConfig& config, int64_t vocab_size = 0);

// `base` with the fields of a JSON object applied (null keeps the base's value), validated.
// "stop" is a string or a list of strings, "logit_bias" an object of token id (a decimal
// string) to number, "seed" an integer. Unknown keys and wrong types are errors naming them.
GenerationConfig parse_generation_config(std::string_view json, const GenerationConfig& base = {});

// The defaults MLC's engine takes from mlc-chat-config.json: temperature, top_p,
// presence_penalty, frequency_penalty (missing or null keys keep GenerationConfig's own).
// repetition_penalty is not read: MLC writes it there but never applies it. A value of the
// wrong type or out of range is an error naming the key ("field").
GenerationConfig generation_defaults_from_chat_config(std::string_view chat_config_json);

}  // namespace graphrt

#pragma GCC visibility pop
