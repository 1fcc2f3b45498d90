// Text in, text out on a language model: one request's generation, step by step (sampling, the
// streaming detokenizer, stop strings and stop tokens, the token budget), and whole generations
// on an MLC-LLM model folder (its LanguageModel, tokenizer, conv_template and sampling defaults).
//
//   graphrt::Session session(graphrt::runtime(), graphrt::cpu());
//   graphrt::TextGenerator gen(session, "dist/tiny_gpt2_chat");
//   graphrt::GenerationConfig config = gen.default_config();
//   config.temperature = 0;
//   config.max_tokens = 16;
//   std::string text = gen.generate("The capital of France is", config).text;
//   gen.stream("Once upon a time,", config, [](const std::string& piece) { std::cout << piece; });
//   std::string answer = gen.chat({{"user", "What is the capital of France?"}}, config).text;
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graphrt/conversation.h"
#include "graphrt/generation_config.h"
#include "graphrt/language_model.h"
#include "graphrt/sampler.h"
#include "graphrt/tokenizer.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

// "stop": a stop string or stop token; "length": max_tokens or the sequence's limit.
enum class FinishReason { kNone, kStop, kLength };
const char* finish_reason_name(FinishReason reason);  // "stop", "length", "" for kNone

struct GenerationResult {
  std::string text;  // the completion, without the stop string or stop token
  FinishReason finish_reason = FinishReason::kNone;
  std::vector<int32_t> tokens;        // every token sampled (a stop token included)
  std::vector<SampledToken> sampled;  // with log-probabilities, when the config asks for them
  int64_t prompt_tokens = 0;          // what the model was given (prefix tokens included)
  double time_to_first_token_s = 0;   // prefill and the first sample
  double decode_s = 0;                // the decode steps after it, together
};

// A piece of streamed text: whole UTF-8 characters, never any part of a stop string.
using TextCallback = std::function<void(const std::string& piece)>;

// One request on its way: fed the logits of each step, it samples the next token, turns tokens
// into text pieces and ends on a stop or the budget. A caller batching several requests feeds
// each its own row (the same seed gives the same tokens whatever the batch holds).
class TextGeneration {
 public:
  // The stops and stop ids of `config` plus those given (a template's); `token_limit`: the
  // tokens the sequence may still take (<= 0: none beyond max_tokens); ids at or past
  // active_vocab_size (<= 0: none) are never sampled.
  TextGeneration(const Tokenizer& tokenizer, GenerationConfig config, int64_t vocab_size,
                 std::vector<std::string> extra_stops = {}, std::vector<int32_t> extra_stop_ids = {},
                 int64_t token_limit = 0, int64_t active_vocab_size = 0);
  ~TextGeneration();
  TextGeneration(TextGeneration&&) noexcept;

  // Samples from one row of logits; returns the token to feed the model next, or nothing when
  // the generation is over (then result() is final). Text goes to `on_text` as it is released.
  std::optional<int32_t> step(const float* logits, size_t count, const TextCallback& on_text = {});
  bool finished() const;
  GenerationResult& result();

 private:
  struct __attribute__((visibility("hidden"))) State;  // internal, unlike the class around it
  std::unique_ptr<State> state_;
};

// An MLC-LLM model folder ready for text: its LanguageModel, the tokenizer of its files, the
// conv_template and the sampling defaults of mlc-chat-config.json.
class TextGenerator {
 public:
  TextGenerator(const Session& session, const std::string& folder, MlcFolderOptions options = {});
  ~TextGenerator();
  TextGenerator(const TextGenerator&) = delete;
  TextGenerator& operator=(const TextGenerator&) = delete;

  // The request defaults (mlc-chat-config.json's temperature, top_p, penalties).
  const GenerationConfig& default_config() const { return defaults_; }
  const ConvTemplate& conv_template() const { return conv_; }  // empty when the config has none
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  LanguageModel& language_model() { return *model_; }

  // A completion of `prompt` encoded as is (no template, no prefix tokens; the template's
  // stop strings and stop ids apply, as MLC's completions do). Errors name the field at fault.
  GenerationResult generate(const std::string& prompt, const GenerationConfig& config);
  // As generate, with each piece of text handed to `on_text` as soon as it is safe to show.
  GenerationResult stream(const std::string& prompt, const GenerationConfig& config, const TextCallback& on_text);
  // The assistant's answer to `messages` under the conv_template.
  GenerationResult chat(const std::vector<ChatMessage>& messages, const GenerationConfig& config,
                        const TextCallback& on_text = {});
  // Several completions stepped together (one batch_prefill, then batch_decode steps, where the
  // library has them); results in the prompts' order.
  std::vector<GenerationResult> generate_batch(const std::vector<std::string>& prompts,
                                               const std::vector<GenerationConfig>& configs);

  // The ids the model is given for a chat: system_prefix_token_ids, then the prompt's text.
  std::vector<int32_t> chat_prompt_ids(const std::vector<ChatMessage>& messages) const;

  // One request's generation on prompt `ids` (the template's stop strings and ids, the
  // sequence's room), for a caller that steps the model itself (ContinuousBatcher). Errors
  // name the field ("prompt" when the ids leave no room) and the option ("max_total_seq_len").
  TextGeneration start(const std::vector<int32_t>& ids, const GenerationConfig& config);
  // A sequence id that no other generation of this generator uses and that is not in the
  // model's cache (a caller's own sequences, graphrt_lm_add_sequence's, share it).
  int64_t new_sequence_id() {
    while (model_->has_sequence(next_sequence_)) ++next_sequence_;
    return next_sequence_++;
  }

 private:
  GenerationResult run(const std::vector<int32_t>& ids, const GenerationConfig& config,
                       const TextCallback& on_text);

  std::unique_ptr<LanguageModel> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  ConvTemplate conv_;
  bool has_conv_ = false;
  int64_t active_vocab_ = 0;
  GenerationConfig defaults_;
  int64_t next_sequence_ = 0;
};

}  // namespace graphrt

#pragma GCC visibility pop
