// The language-model C API (graphrt/c_api.h, "language models"): graphrt_lm_* over
// TextGenerator, behind the one C guard.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/c_api.h"
#include "graphrt/json_writer.h"
#include "graphrt/language_model.h"
#include "graphrt/text_generation.h"
#include "src/layer_api/c_api_guard.h"

struct graphrt_lm {
  std::unique_ptr<graphrt::Session> session;  // outlives the generator made over it
  std::unique_ptr<graphrt::TextGenerator> generator;  // null for a library alone (graphrt_lm_open_library)
  std::shared_ptr<graphrt::Model> library;             // graphrt_lm_open_library's, and its model over it
  std::unique_ptr<graphrt::LanguageModel> library_model;
  // graphrt_lm_step's: the steps, grown and never shrunk (a steady decode refills the same
  // token vectors, so the call allocates nothing), and the last step's logits, which the
  // caller's pointer reads.
  std::vector<graphrt::SequenceStep> steps;
  graphrt::StepLogits logits;
};

namespace graphrt {
namespace {

graphrt_lm& lm_of(graphrt_lm_t lm) {
  if (!lm) throw Error("null language model handle");
  if (!lm->generator)
    throw Error(ErrorKind::kFailedPrecondition,
                "this language model is a library alone (graphrt_lm_open_library): no tokenizer, no generation; "
                "it steps (graphrt_lm_step)");
  return *lm;
}

// The model that steps: the folder's, or the library's.
LanguageModel& model_of(graphrt_lm_t lm) {
  if (!lm) throw Error("null language model handle");
  return lm->generator ? lm->generator->language_model() : *lm->library_model;
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

// A double as JSON, with ".0" when it is whole, so that a reader telling integers from
// numbers (Python's json) sees a number, as the fields' type is.
JsonWriter& real(JsonWriter& w, double v) {
  std::string text;
  append_json_number(&text, v);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return w.raw(text);
}

// Members are written in the order of their names: the text is the same as before the move to
// the base writer (whose callers place them).
std::string config_to_json(const GenerationConfig& c) {
  JsonWriter w;
  w.begin_object();
  real(w.key("frequency_penalty"), c.frequency_penalty);
  w.key("logit_bias").begin_object();
  // By the id's text, as the names of an object are ordered.
  std::map<std::string, float> bias;
  for (const auto& [token, value] : c.logit_bias) bias[std::to_string(token)] = value;
  for (const auto& [token, value] : bias) real(w.key(token), value);
  w.end_object();
  w.key("logprobs").boolean(c.logprobs);
  w.key("max_tokens");
  if (c.max_tokens < 0) w.null();
  else w.integer(c.max_tokens);
  real(w.key("presence_penalty"), c.presence_penalty);
  real(w.key("repetition_penalty"), c.repetition_penalty);
  w.key("seed");
  if (c.seed) w.integer(*c.seed);
  else w.null();
  w.key("stop").begin_array();
  for (const std::string& stop : c.stop) w.string(stop);
  w.end_array();
  w.key("stop_token_ids").begin_array();
  for (int32_t id : c.stop_token_ids) w.integer(id);
  w.end_array();
  real(w.key("temperature"), c.temperature);
  w.key("top_k").integer(c.top_k);
  w.key("top_logprobs").integer(c.top_logprobs);
  real(w.key("top_p"), c.top_p);
  w.end_object();
  return w.take();
}

std::string result_json(const GenerationResult& r) {
  JsonWriter w;
  w.begin_object();
  real(w.key("decode_s"), r.decode_s);
  w.key("finish_reason").string(finish_reason_name(r.finish_reason));
  w.key("logprobs");
  if (r.sampled.empty()) {
    w.null();
  } else {
    w.begin_array();
    for (const SampledToken& s : r.sampled) {
      real(w.begin_object().key("logprob"), s.logprob);
      w.key("token").integer(s.token).key("top_logprobs").begin_array();
      for (const TokenLogprob& t : s.top_logprobs) {
        real(w.begin_object().key("logprob"), t.logprob);
        w.key("token").integer(t.token).end_object();
      }
      w.end_array().end_object();
    }
    w.end_array();
  }
  w.key("prompt_tokens").integer(r.prompt_tokens);
  w.key("text").string(r.text);  // a token's bytes that are not UTF-8 are written as U+FFFD
  real(w.key("time_to_first_token_s"), r.time_to_first_token_s);
  w.key("tokens").begin_array();
  for (int32_t t : r.tokens) w.integer(t);
  w.end_array();
  w.end_object();
  return w.take();
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

int graphrt_lm_open_library(const char* path, int64_t max_total_seq_len, int64_t prefill_chunk_size, int device_type,
                            int device_id, graphrt_lm_t* out) {
  return graphrt_api_guard([&] {
    require_out(out, "out");
    *out = nullptr;
    if (!path) throw Error("graphrt_lm_open_library: null path");
    const DLDevice device = device_type == 0 ? cpu() : DLDevice{static_cast<DLDeviceType>(device_type), device_id};
    LanguageModelOptions options;
    if (max_total_seq_len > 0) options.max_total_seq_len = max_total_seq_len;
    if (prefill_chunk_size > 0) options.prefill_chunk_size = prefill_chunk_size;
    auto lm = std::make_unique<graphrt_lm>();
    lm->session = std::make_unique<Session>(runtime(), device);
    ModelSource source;
    source.path = path;
    lm->library = lm->session->load(source);
    lm->library_model = std::make_unique<LanguageModel>(*lm->library, options);
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
    strings.result = config_to_json(lm_of(lm).generator->default_config());
    *config_json = strings.result.c_str();
  });
}

int graphrt_lm_add_sequence(graphrt_lm_t lm, int64_t seq_id) {
  return graphrt_api_guard([&] { model_of(lm).add_sequence(seq_id); });
}

int graphrt_lm_remove_sequence(graphrt_lm_t lm, int64_t seq_id) {
  return graphrt_api_guard([&] { model_of(lm).remove_sequence(seq_id); });
}

int graphrt_lm_vocab_size(graphrt_lm_t lm, int64_t* out) {
  return graphrt_api_guard([&] {
    require_out(out, "out");
    *out = model_of(lm).vocab_size();
  });
}

int graphrt_lm_step(graphrt_lm_t lm, size_t n, const int64_t* seq_ids, const int32_t* tokens, const int64_t* offsets,
                    const float** logits) {
  return graphrt_api_guard([&] {
    require_out(logits, "logits");
    *logits = nullptr;
    LanguageModel& stepped = model_of(lm);
    graphrt_lm& model = *lm;
    if (n == 0) throw Error("graphrt_lm_step: a step of no sequence (n is 0)");
    if (!seq_ids) throw Error("graphrt_lm_step: null seq_ids");
    if (offsets && offsets[0] != 0)
      throw Error("graphrt_lm_step: offsets[0] is " + std::to_string(offsets[0]) + ", not 0");
    for (size_t i = 0; offsets && i < n; ++i)
      if (offsets[i + 1] < offsets[i])
        throw Error("graphrt_lm_step: offsets[" + std::to_string(i + 1) + "] (" + std::to_string(offsets[i + 1]) +
                    ") is below offsets[" + std::to_string(i) + "] (" + std::to_string(offsets[i]) + ")");
    const int64_t total = offsets ? offsets[n] : static_cast<int64_t>(n);
    if (!tokens && total > 0) throw Error("graphrt_lm_step: null tokens");
    if (model.steps.size() < n) model.steps.resize(n);
    for (size_t i = 0; i < n; ++i) {
      SequenceStep& s = model.steps[i];
      s.id = seq_ids[i];
      const int64_t begin = offsets ? offsets[i] : static_cast<int64_t>(i);
      const int64_t end = offsets ? offsets[i + 1] : begin + 1;
      s.tokens.assign(tokens + begin, tokens + end);
    }
    model.logits = StepLogits();  // the last step's rows go back to the model's storage first
    model.logits = stepped.step(model.steps.data(), n);
    *logits = model.logits.row(0);
  });
}

}  // extern "C"
