// The language-model C API (graphrt/c_api.h, "language models"): graphrt_lm_* over
// TextGenerator, behind the one C guard.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "graphrt/c_api.h"
#include "graphrt/text_generation.h"
#include "src/layer_api/c_api_guard.h"

struct graphrt_lm {
  std::unique_ptr<graphrt::Session> session;  // outlives the generator made over it
  std::unique_ptr<graphrt::TextGenerator> generator;
};

namespace graphrt {
namespace {

using json = nlohmann::json;

graphrt_lm& lm_of(graphrt_lm_t lm) {
  if (!lm) throw Error("null language model handle");
  return *lm;
}

template <typename T>
void require_out(T* out, const char* what) {
  if (!out) throw Error(std::string("null output pointer (") + what + ")");
}

// Strings C holds until the thread's next call of the same function.
struct ThreadStrings {
  std::string text;
  std::string result;
  std::vector<int32_t> ids;
};
ThreadStrings& thread_strings() {
  thread_local ThreadStrings strings;
  return strings;
}

GenerationConfig config_of(graphrt_lm& lm, const char* config_json) {
  const GenerationConfig& defaults = lm.generator->default_config();
  return config_json && *config_json ? parse_generation_config(config_json, defaults) : defaults;
}

json config_to_json(const GenerationConfig& c) {
  json bias = json::object();
  for (const auto& [token, value] : c.logit_bias) bias[std::to_string(token)] = value;
  return {{"temperature", c.temperature},
          {"top_p", c.top_p},
          {"top_k", c.top_k},
          {"presence_penalty", c.presence_penalty},
          {"frequency_penalty", c.frequency_penalty},
          {"repetition_penalty", c.repetition_penalty},
          {"logit_bias", bias},
          {"seed", c.seed ? json(*c.seed) : json(nullptr)},
          {"max_tokens", c.max_tokens < 0 ? json(nullptr) : json(c.max_tokens)},
          {"stop", c.stop},
          {"stop_token_ids", c.stop_token_ids},
          {"logprobs", c.logprobs},
          {"top_logprobs", c.top_logprobs}};
}

std::string result_json(const GenerationResult& r) {
  json logprobs = json::array();
  for (const SampledToken& s : r.sampled) {
    json top = json::array();
    for (const TokenLogprob& t : s.top_logprobs) top.push_back({{"token", t.token}, {"logprob", t.logprob}});
    logprobs.push_back({{"token", s.token}, {"logprob", s.logprob}, {"top_logprobs", top}});
  }
  const json out = {{"text", r.text},
                    {"finish_reason", finish_reason_name(r.finish_reason)},
                    {"tokens", r.tokens},
                    {"prompt_tokens", r.prompt_tokens},
                    {"logprobs", r.sampled.empty() ? json(nullptr) : logprobs},
                    {"time_to_first_token_s", r.time_to_first_token_s},
                    {"decode_s", r.decode_s}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The C callback as a TextCallback: a non-zero return ends the generation as interrupted.
TextCallback callback_of(graphrt_text_callback on_text, void* user_data) {
  if (!on_text) return {};
  return [on_text, user_data](const std::string& piece) {
    if (on_text(piece.data(), piece.size(), user_data) != 0) {
      throw Error(ErrorKind::kInterrupted, "the text callback stopped the generation");
    }
  };
}

void hand_out(const GenerationResult& r, const char** text, const char** result) {
  ThreadStrings& strings = thread_strings();
  strings.text = r.text;
  if (text) *text = strings.text.c_str();
  if (result) {
    strings.result = result_json(r);
    *result = strings.result.c_str();
  }
}

}  // namespace
}  // namespace graphrt

using namespace graphrt;

extern "C" {

int graphrt_lm_open(const char* folder, const char* model_lib, int device_type, int device_id, graphrt_lm_t* out) {
  return graphrt_api_guard([&] {
    require_out(out, "out");
    *out = nullptr;
    if (!folder) throw Error("graphrt_lm_open: null folder");
    const DLDevice device = device_type == 0 ? cpu() : DLDevice{static_cast<DLDeviceType>(device_type), device_id};
    MlcFolderOptions options;
    options.model_lib = model_lib ? model_lib : "";
    // TVM's C ABI names no runtime: C models load through the process's default.
    auto lm = std::make_unique<graphrt_lm>();
    lm->session = std::make_unique<Session>(runtime(), device);
    lm->generator = std::make_unique<TextGenerator>(*lm->session, folder, options);
    *out = lm.release();
  });
}

void graphrt_lm_free(graphrt_lm_t lm) { std::unique_ptr<graphrt_lm> owned(lm); }

int graphrt_lm_tokenize(graphrt_lm_t lm, const char* text, const int32_t** ids, size_t* count) {
  return graphrt_api_guard([&] {
    require_out(ids, "ids");
    require_out(count, "count");
    if (!text) throw Error("graphrt_lm_tokenize: null text");
    ThreadStrings& strings = thread_strings();
    strings.ids = lm_of(lm).generator->tokenizer().encode(text);
    *ids = strings.ids.data();
    *count = strings.ids.size();
  });
}

int graphrt_lm_detokenize(graphrt_lm_t lm, const int32_t* ids, size_t count, const char** text) {
  return graphrt_api_guard([&] {
    require_out(text, "text");
    if (!ids && count > 0) throw Error("graphrt_lm_detokenize: null ids");
    std::vector<int32_t> list(ids, ids + count);
    ThreadStrings& strings = thread_strings();
    strings.text = lm_of(lm).generator->tokenizer().decode(list);
    *text = strings.text.c_str();
  });
}

int graphrt_lm_generate(graphrt_lm_t lm, const char* prompt, const char* config_json, graphrt_text_callback on_text,
                        void* user_data, const char** text, const char** result) {
  return graphrt_api_guard([&] {
    if (!prompt) throw Error("graphrt_lm_generate: null prompt");
    graphrt_lm& model = lm_of(lm);
    const GenerationConfig config = config_of(model, config_json);
    hand_out(model.generator->stream(prompt, config, callback_of(on_text, user_data)), text, result);
  });
}

int graphrt_lm_chat(graphrt_lm_t lm, const char* messages_json, const char* config_json, graphrt_text_callback on_text,
                    void* user_data, const char** text, const char** result) {
  return graphrt_api_guard([&] {
    if (!messages_json) throw Error("graphrt_lm_chat: null messages");
    graphrt_lm& model = lm_of(lm);
    const GenerationConfig config = config_of(model, config_json);
    const std::vector<ChatMessage> messages = parse_chat_messages(messages_json);
    hand_out(model.generator->chat(messages, config, callback_of(on_text, user_data)), text, result);
  });
}

int graphrt_lm_default_config(graphrt_lm_t lm, const char** config_json) {
  return graphrt_api_guard([&] {
    require_out(config_json, "config_json");
    ThreadStrings& strings = thread_strings();
    strings.result = config_to_json(lm_of(lm).generator->default_config()).dump();
    *config_json = strings.result.c_str();
  });
}

}  // extern "C"
