// Whole generations on an MLC-LLM model folder: prompt ids in, one TextGeneration per request,
// the LanguageModel stepped until each is over.
#include "graphrt/text_generation.h"

#include <chrono>

#include "graphrt/error.h"
#include "llm/tokenizer/json_fields.h"

namespace graphrt {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Removes a request's sequence from the cache however the generation ends.
class SequenceGuard {
 public:
  SequenceGuard(LanguageModel& model, int64_t id) : model_(model), id_(id) { model_.add_sequence(id_); }
  ~SequenceGuard() {
    try {
      model_.remove_sequence(id_);
    } catch (...) {
      // The cache is past use when removal fails; the generation's own error is the one to report.
    }
  }
  SequenceGuard(const SequenceGuard&) = delete;
  SequenceGuard& operator=(const SequenceGuard&) = delete;

 private:
  LanguageModel& model_;
  int64_t id_;
};

// mlc-chat-config.json, read again for what the generator needs besides the session's fields
// (the session's reader checked the text and bounds its size).
constexpr JsonLimits kChatConfigLimits{size_t(16) << 20, 64};

// ids at or past active_vocab_size are padding of the logits (mlc-chat-config.json; 0: none).
int64_t active_vocab_size(const llm::JsonAt& config) {
  if (!config.is_object() || !config.has("active_vocab_size")) return 0;
  const llm::JsonAt field = config.member("active_vocab_size");
  return field.is_integer() ? field.integer(INT64_MIN, INT64_MAX) : 0;
}

// The folder's tokenizer, with mlc-chat-config.json's tokenizer_info when it has one.
std::unique_ptr<Tokenizer> tokenizer_of(const std::string& folder, const std::string& chat_config_text) {
  const std::string file = folder + "/mlc-chat-config.json";
  const llm::JsonDoc doc(chat_config_text, file, kChatConfigLimits);
  const llm::JsonAt config = doc.root();
  if (config.is_object() && config.has_non_null("tokenizer_info")) {
    const TokenizerInfo info = TokenizerInfo::from_json_text(config.member("tokenizer_info").raw_text(), file);
    return std::make_unique<Tokenizer>(Tokenizer::from_folder(folder, &info));
  }
  return std::make_unique<Tokenizer>(Tokenizer::from_folder(folder));
}

}  // namespace

TextGenerator::TextGenerator(const Session& session, const std::string& folder, MlcFolderOptions options)
    : model_(std::make_unique<LanguageModel>(session, folder, std::move(options))),
      tokenizer_(tokenizer_of(folder, model_->chat_config().text)) {
  const std::string& config_text = model_->chat_config().text;
  try {
    defaults_ = generation_defaults_from_chat_config(config_text);
  } catch (Error& e) {
    throw e.with("file", folder + "/mlc-chat-config.json");
  }
  const std::string file = folder + "/mlc-chat-config.json";
  const llm::JsonDoc doc(config_text, file, kChatConfigLimits);
  const llm::JsonAt config = doc.root();
  if (config.is_object() && config.has_non_null("conv_template")) {
    try {
      conv_ = conv_template_from_chat_config(config_text);
    } catch (Error& e) {
      throw e.with("file", file);
    }
    has_conv_ = true;
  }
  active_vocab_ = active_vocab_size(config);
}

TextGenerator::~TextGenerator() = default;

GenerationResult TextGenerator::generate(const std::string& prompt, const GenerationConfig& config) {
  return run(tokenizer_->encode(prompt), config, {});
}

GenerationResult TextGenerator::stream(const std::string& prompt, const GenerationConfig& config,
                                       const TextCallback& on_text) {
  return run(tokenizer_->encode(prompt), config, on_text);
}

std::vector<int32_t> TextGenerator::chat_prompt_ids(const std::vector<ChatMessage>& messages) const {
  GRAPHRT_CHECK_KIND(has_conv_, ErrorKind::kNotFound, "the model's mlc-chat-config.json has no conv_template");
  const ChatPrompt prompt = assemble_chat_prompt(conv_, messages);
  std::vector<int32_t> ids = prompt.prefix_token_ids;
  const std::vector<int32_t> text_ids = tokenizer_->encode(prompt.text);
  ids.insert(ids.end(), text_ids.begin(), text_ids.end());
  return ids;
}

GenerationResult TextGenerator::chat(const std::vector<ChatMessage>& messages, const GenerationConfig& config,
                                     const TextCallback& on_text) {
  return run(chat_prompt_ids(messages), config, on_text);
}

TextGeneration TextGenerator::start(const std::vector<int32_t>& ids, const GenerationConfig& config) {
  GRAPHRT_CHECK(!ids.empty(), "the prompt has no tokens");
  const int64_t room = model_->max_sequence_length() - static_cast<int64_t>(ids.size());
  if (room < 1) {
    throw Error(ErrorKind::kOutOfRange, "the prompt's " + std::to_string(ids.size()) +
                                            " tokens leave no room in the model's sequence limit of " +
                                            std::to_string(model_->max_sequence_length()))
        .with("field", "prompt")
        .with("option", "max_total_seq_len");
  }
  std::vector<std::string> stops = has_conv_ ? conv_.stop_str : std::vector<std::string>{};
  std::vector<int32_t> stop_ids = has_conv_ ? conv_.stop_token_ids : std::vector<int32_t>{};
  // A token sampled last is not fed back: the sequence takes at most room + 1 samples.
  return TextGeneration(*tokenizer_, config, model_->vocab_size(), std::move(stops), std::move(stop_ids), room + 1,
                        active_vocab_);
}

GenerationResult TextGenerator::run(const std::vector<int32_t>& ids, const GenerationConfig& config,
                                    const TextCallback& on_text) {
  TextGeneration generation = start(ids, config);
  const int64_t id = new_sequence_id();
  SequenceGuard sequence(*model_, id);
  const auto start_time = Clock::now();
  StepLogits logits = model_->step({{id, ids}});
  std::optional<int32_t> next = generation.step(logits.row(0), static_cast<size_t>(logits.vocab_size()), on_text);
  GenerationResult& result = generation.result();
  result.time_to_first_token_s = seconds_since(start_time);
  const auto decode_start = Clock::now();
  while (next) {
    logits = model_->step({{id, {*next}}});
    next = generation.step(logits.row(0), static_cast<size_t>(logits.vocab_size()), on_text);
  }
  result.decode_s = seconds_since(decode_start);
  result.prompt_tokens = static_cast<int64_t>(ids.size());
  return std::move(result);
}

std::vector<GenerationResult> TextGenerator::generate_batch(const std::vector<std::string>& prompts,
                                                            const std::vector<GenerationConfig>& configs) {
  GRAPHRT_CHECK(prompts.size() == configs.size(), "generate_batch: " + std::to_string(prompts.size()) +
                                                      " prompts for " + std::to_string(configs.size()) + " configs");
  std::vector<TextGeneration> generations;
  std::vector<std::unique_ptr<SequenceGuard>> sequences;
  std::vector<int64_t> ids;
  std::vector<SequenceStep> step;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::vector<int32_t> prompt_ids = tokenizer_->encode(prompts[i]);
    generations.push_back(start(prompt_ids, configs[i]));
    generations.back().result().prompt_tokens = static_cast<int64_t>(prompt_ids.size());
    ids.push_back(new_sequence_id());
    sequences.push_back(std::make_unique<SequenceGuard>(*model_, ids.back()));
    step.push_back({ids.back(), prompt_ids});
  }
  std::vector<size_t> order(prompts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;  // the request of each row of the step
  while (!step.empty()) {
    const StepLogits logits = model_->step(step);
    std::vector<SequenceStep> next_step;
    std::vector<size_t> next_order;
    for (size_t row = 0; row < order.size(); ++row) {
      auto token = generations[order[row]].step(logits.row(row), static_cast<size_t>(logits.vocab_size()));
      if (!token) continue;
      next_step.push_back({ids[order[row]], {*token}});
      next_order.push_back(order[row]);
    }
    step = std::move(next_step);
    order = std::move(next_order);
  }
  std::vector<GenerationResult> results;
  for (TextGeneration& g : generations) results.push_back(std::move(g.result()));
  return results;
}

}  // namespace graphrt
