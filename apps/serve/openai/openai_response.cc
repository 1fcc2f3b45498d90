#include "openai/openai_response.h"

#include <chrono>
#include <random>

#include "graphrt/json_writer.h"

namespace graphrt_serve {

using graphrt::JsonWriter;

namespace {

// Text the library made is whole UTF-8 characters; a token's own text (logprobs) may be part of
// one: the writer replaces what is not UTF-8 (graphrt/json_writer.h), never an exception.
std::string sse(const std::string& json) { return "data: " + json + "\n\n"; }

JsonWriter& string_or_null(JsonWriter& w, const std::string& s) { return s.empty() ? w.null() : w.string(s); }

void write_usage(JsonWriter& w, int64_t prompt_tokens, int64_t completion_tokens) {
  w.begin_object().key("prompt_tokens").integer(prompt_tokens).key("completion_tokens").integer(completion_tokens);
  w.key("total_tokens").integer(prompt_tokens + completion_tokens).end_object();
}

std::string text_of(const OpenAIChoice& c, int32_t token) {
  const auto it = c.token_text.find(token);
  return it == c.token_text.end() ? std::string() : it->second;
}

// Completions' logprobs: {tokens, token_logprobs, top_logprobs [{text: lp}], text_offset}.
void write_completion_logprobs(JsonWriter& w, const OpenAIChoice& c) {
  const auto& sampled = c.result.sampled;
  w.begin_object().key("tokens").begin_array();
  for (const graphrt::SampledToken& s : sampled) w.string(text_of(c, s.token));
  w.end_array().key("token_logprobs").begin_array();
  for (const graphrt::SampledToken& s : sampled) w.number(s.logprob);
  w.end_array().key("top_logprobs").begin_array();
  for (const graphrt::SampledToken& s : sampled) {
    // Keyed by text: two tokens of the same text are one entry (the later one's logprob).
    std::map<std::string, float> top;
    for (const graphrt::TokenLogprob& t : s.top_logprobs) top[text_of(c, t.token)] = t.logprob;
    w.begin_object();
    for (const auto& [text, logprob] : top) w.key(text).number(logprob);
    w.end_object();
  }
  w.end_array().key("text_offset").begin_array();
  size_t offset = 0;
  for (const graphrt::SampledToken& s : sampled) {
    w.unsigned_integer(offset);
    offset += text_of(c, s.token).size();
  }
  w.end_array().end_object();
}

void write_token(JsonWriter& w, const std::string& text, float logprob) {
  w.key("token").string(text).key("logprob").number(logprob).key("bytes").begin_array();
  for (unsigned char ch : text) w.integer(ch);
  w.end_array();
}

// Chat's logprobs: {content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}.
void write_chat_logprobs(JsonWriter& w, const OpenAIChoice& c) {
  w.begin_object().key("content").begin_array();
  for (const graphrt::SampledToken& s : c.result.sampled) {
    w.begin_object();
    write_token(w, text_of(c, s.token), s.logprob);
    w.key("top_logprobs").begin_array();
    for (const graphrt::TokenLogprob& t : s.top_logprobs) {
      w.begin_object();
      write_token(w, text_of(c, t.token), t.logprob);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
}

// Opens the object and writes what every object of the response shares.
void write_head(JsonWriter& w, const OpenAIResponseHead& head, bool chunk) {
  const bool chat = head.endpoint == OpenAIEndpoint::kChat;
  w.begin_object().key("id").string(head.id);
  w.key("object").string(chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion");
  w.key("created").integer(head.created).key("model").string(head.model);
  if (chat) w.key("system_fingerprint").string("");
}

}  // namespace

OpenAIResponseHead openai_response_head(OpenAIEndpoint endpoint, const std::string& model) {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  static const char kHex[] = "0123456789abcdef";
  OpenAIResponseHead head;
  head.endpoint = endpoint;
  head.model = model;
  head.id = endpoint == OpenAIEndpoint::kChat ? "chatcmpl-" : "cmpl-";
  for (int i = 0; i < 32; ++i) head.id += kHex[generator() & 15];
  head.created = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  return head;
}

std::string openai_response_json(const OpenAIResponseHead& head, const std::vector<OpenAIChoice>& choices,
                                 bool logprobs) {
  const bool chat = head.endpoint == OpenAIEndpoint::kChat;
  JsonWriter w;
  write_head(w, head, false);
  w.key("choices").begin_array();
  int64_t prompt_tokens = 0, completion_tokens = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const graphrt::GenerationResult& r = choices[i].result;
    w.begin_object().key("index").unsigned_integer(i).key("finish_reason");
    string_or_null(w, graphrt::finish_reason_name(r.finish_reason));
    if (chat) w.key("message").begin_object().key("role").string("assistant").key("content").string(r.text).end_object();
    else w.key("text").string(r.text);
    w.key("logprobs");
    if (!logprobs) w.null();
    else if (chat) write_chat_logprobs(w, choices[i]);
    else write_completion_logprobs(w, choices[i]);
    w.end_object();
    prompt_tokens = r.prompt_tokens;  // the same prompt for every choice
    completion_tokens += static_cast<int64_t>(r.tokens.size());
  }
  w.end_array().key("usage");
  write_usage(w, prompt_tokens, completion_tokens);
  w.end_object();
  return w.take();
}

std::string openai_chunk_event(const OpenAIResponseHead& head, int64_t index, const std::string& text,
                               const std::string& finish_reason, bool first) {
  JsonWriter w;
  write_head(w, head, true);
  w.key("choices").begin_array().begin_object().key("index").integer(index).key("finish_reason");
  string_or_null(w, finish_reason).key("logprobs").null();
  if (head.endpoint == OpenAIEndpoint::kChat) {
    w.key("delta").begin_object().key("content").string(text);
    if (first) w.key("role").string("assistant");
    w.end_object();
  } else {
    w.key("text").string(text);
  }
  w.end_object().end_array().key("usage").null().end_object();
  return sse(w.take());
}

std::string openai_usage_event(const OpenAIResponseHead& head, int64_t prompt_tokens, int64_t completion_tokens) {
  JsonWriter w;
  write_head(w, head, true);
  w.key("choices").begin_array().end_array().key("usage");
  write_usage(w, prompt_tokens, completion_tokens);
  w.end_object();
  return sse(w.take());
}

const std::string& openai_done_event() {
  static const std::string done = "data: [DONE]\n\n";
  return done;
}

std::string openai_models_json(const std::vector<std::string>& names) {
  JsonWriter w;
  w.begin_object().key("object").string("list").key("data").begin_array();
  for (const std::string& name : names) {
    w.begin_object().key("id").string(name).key("object").string("model").key("created").integer(0);
    w.key("owned_by").string("graphrt").end_object();
  }
  w.end_array().end_object();
  return w.take();
}

const char* openai_error_type(int status) {
  if (status == 401) return "authentication_error";
  if (status == 404) return "invalid_request_error";
  if (status == 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

std::string openai_error_json(const std::string& message, const std::string& type, const std::string& param,
                              const std::string& code) {
  JsonWriter w;
  w.begin_object().key("error").begin_object().key("message").string(message).key("type").string(type);
  w.key("param");
  string_or_null(w, param).key("code");
  string_or_null(w, code).end_object().end_object();
  return w.take();
}

}  // namespace graphrt_serve
