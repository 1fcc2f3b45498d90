#include "openai/openai_response.h"

#include <chrono>
#include <random>

#include <nlohmann/json.hpp>

namespace graphrt_serve {

using json = nlohmann::json;

namespace {

// Text the library made is whole UTF-8 characters; a token's own text (logprobs) may be part
// of one: replaced, never an exception.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

json null_or(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

std::string text_of(const OpenAIChoice& c, int32_t token) {
  const auto it = c.token_text.find(token);
  return it == c.token_text.end() ? std::string() : it->second;
}

// Completions' logprobs: {tokens, token_logprobs, top_logprobs [{text: lp}], text_offset}.
json completion_logprobs(const OpenAIChoice& c) {
  json tokens = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
  size_t offset = 0;
  for (const graphrt::SampledToken& s : c.result.sampled) {
    const std::string text = text_of(c, s.token);
    tokens.push_back(text);
    lps.push_back(s.logprob);
    offsets.push_back(offset);
    offset += text.size();
    json top = json::object();
    for (const graphrt::TokenLogprob& t : s.top_logprobs) top[text_of(c, t.token)] = t.logprob;
    tops.push_back(top);
  }
  return {{"tokens", tokens}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json token_bytes(const std::string& text) {
  json bytes = json::array();
  for (unsigned char ch : text) bytes.push_back(static_cast<int>(ch));
  return bytes;
}

// Chat's logprobs: {content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}.
json chat_logprobs(const OpenAIChoice& c) {
  json content = json::array();
  for (const graphrt::SampledToken& s : c.result.sampled) {
    const std::string text = text_of(c, s.token);
    json top = json::array();
    for (const graphrt::TokenLogprob& t : s.top_logprobs) {
      const std::string alt = text_of(c, t.token);
      top.push_back({{"token", alt}, {"logprob", t.logprob}, {"bytes", token_bytes(alt)}});
    }
    content.push_back({{"token", text}, {"logprob", s.logprob}, {"bytes", token_bytes(text)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json head_json(const OpenAIResponseHead& head, bool chunk) {
  const bool chat = head.endpoint == OpenAIEndpoint::kChat;
  json j = {{"id", head.id},
            {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
            {"created", head.created},
            {"model", head.model}};
  if (chat) j["system_fingerprint"] = "";
  return j;
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
  json j = head_json(head, false);
  json list = json::array();
  int64_t prompt_tokens = 0, completion_tokens = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const graphrt::GenerationResult& r = choices[i].result;
    json choice = {{"index", i}, {"finish_reason", null_or(graphrt::finish_reason_name(r.finish_reason))}};
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", r.text}};
      choice["logprobs"] = logprobs ? chat_logprobs(choices[i]) : json(nullptr);
    } else {
      choice["text"] = r.text;
      choice["logprobs"] = logprobs ? completion_logprobs(choices[i]) : json(nullptr);
    }
    list.push_back(choice);
    prompt_tokens = r.prompt_tokens;  // the same prompt for every choice
    completion_tokens += static_cast<int64_t>(r.tokens.size());
  }
  j["choices"] = list;
  j["usage"] = usage_json(prompt_tokens, completion_tokens);
  return dump(j);
}

std::string openai_chunk_event(const OpenAIResponseHead& head, int64_t index, const std::string& text,
                               const std::string& finish_reason, bool first) {
  json j = head_json(head, true);
  json choice = {{"index", index}, {"finish_reason", null_or(finish_reason)}, {"logprobs", nullptr}};
  if (head.endpoint == OpenAIEndpoint::kChat) {
    json delta = {{"content", text}};
    if (first) delta["role"] = "assistant";
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  j["choices"] = json::array({choice});
  j["usage"] = nullptr;
  return sse(j);
}

std::string openai_usage_event(const OpenAIResponseHead& head, int64_t prompt_tokens, int64_t completion_tokens) {
  json j = head_json(head, true);
  j["choices"] = json::array();
  j["usage"] = usage_json(prompt_tokens, completion_tokens);
  return sse(j);
}

const std::string& openai_done_event() {
  static const std::string done = "data: [DONE]\n\n";
  return done;
}

std::string openai_models_json(const std::vector<std::string>& names) {
  json data = json::array();
  for (const std::string& name : names)
    data.push_back({{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "graphrt"}});
  return dump({{"object", "list"}, {"data", data}});
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
  return dump({{"error", {{"message", message}, {"type", type}, {"param", null_or(param)}, {"code", null_or(code)}}}});
}

}  // namespace graphrt_serve
