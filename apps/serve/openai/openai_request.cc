#include "openai/openai_request.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using json = nlohmann::json;

namespace {

Error field_error(ErrorKind kind, const std::string& field, const std::string& message) {
  return Error(kind, field + " " + message).with("field", field);
}

bool boolean_of(const json& v, const std::string& field) {
  if (!v.is_boolean()) throw field_error(ErrorKind::kTypeMismatch, field, "must be true or false");
  return v.get<bool>();
}

// A message's content: a string, null, or a list of text parts (joined).
std::optional<std::string> content_of(const json& v, const std::string& field) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) throw field_error(ErrorKind::kTypeMismatch, field, "must be a string, null or a list of text parts");
  std::string text;
  for (const json& part : v) {
    if (!part.is_object() || part.value("type", json()) != "text" || !part.contains("text") || !part["text"].is_string())
      throw field_error(ErrorKind::kUnsupported, field, "parts must be {\"type\": \"text\", \"text\": ...} (this server "
                                                        "takes text only)");
    text += part["text"].get<std::string>();
  }
  return text;
}

std::vector<graphrt::ChatMessage> messages_of(const json& v) {
  if (!v.is_array() || v.empty())
    throw field_error(ErrorKind::kInvalidArgument, "messages", "must be a non-empty list of {role, content}");
  std::vector<graphrt::ChatMessage> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = "messages[" + std::to_string(i) + "]";
    const json& m = v[i];
    if (!m.is_object()) throw field_error(ErrorKind::kTypeMismatch, at, "must be an object {role, content}");
    graphrt::ChatMessage message;
    for (const auto& kv : m.items()) {
      if (kv.key() == "role") {
        if (!kv.value().is_string()) throw field_error(ErrorKind::kTypeMismatch, at + ".role", "must be a string");
        message.role = kv.value().get<std::string>();
      } else if (kv.key() == "content") {
        message.content = content_of(kv.value(), at + ".content");
      } else if (kv.key() != "name") {
        throw field_error(ErrorKind::kUnsupported, at + "." + kv.key(), "is not a message field this server takes "
                                                                         "(role, content, name)");
      }
    }
    static const char* const kRoles[] = {"system", "user", "assistant", "tool"};
    bool known = false;
    for (const char* r : kRoles) known = known || message.role == r;
    if (!known)
      throw field_error(ErrorKind::kInvalidArgument, at + ".role", "must be system, user, assistant or tool");
    out.push_back(std::move(message));
  }
  return out;
}

// OpenAI's "logprobs": the number of alternatives for completions (null: off), true/false for chat.
void logprobs_of(const json& v, OpenAIEndpoint endpoint, json& sampling) {
  if (v.is_null()) return;
  if (endpoint == OpenAIEndpoint::kChat) {
    sampling["logprobs"] = boolean_of(v, "logprobs");
    return;
  }
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 5)
    throw field_error(ErrorKind::kOutOfRange, "logprobs", "must be an integer in [0, 5] (or null)");
  sampling["logprobs"] = true;
  sampling["top_logprobs"] = v;
}

// Fields OpenAI defines that this server takes only at their default.
void default_only(const std::string& key, const json& v) {
  const bool ok = key == "best_of" ? v.is_null() || v == 1
                : key == "echo" ? v.is_null() || v == false
                : key == "suffix" ? v.is_null()
                : key == "response_format" ? v.is_null() || (v.is_object() && v.value("type", json()) == "text")
                : key == "tool_choice" ? v.is_null() || v == "none"
                : key == "tools" ? v.is_null() || (v.is_array() && v.empty())
                : key == "parallel_tool_calls" ? true
                : false;
  if (!ok) throw field_error(ErrorKind::kUnsupported, key, "is not supported by this server (only its default)");
}

}  // namespace

OpenAIRequest decode_openai_request(const std::string& body, OpenAIEndpoint endpoint) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorKind::kInvalidArgument, "the request body is not valid JSON");
  if (!j.is_object()) throw Error(ErrorKind::kTypeMismatch, "the request body must be a JSON object");
  const bool chat = endpoint == OpenAIEndpoint::kChat;
  OpenAIRequest r;
  r.endpoint = endpoint;
  json sampling = json::object();
  bool has_input = false;
  const json* stream_options = nullptr;
  for (const auto& kv : j.items()) {
    const std::string& key = kv.key();
    const json& v = kv.value();
    if (key == "model") {
      if (!v.is_string() && !v.is_null()) throw field_error(ErrorKind::kTypeMismatch, key, "must be a string");
      if (v.is_string()) r.model = v.get<std::string>();
    } else if (!chat && key == "prompt") {
      if (v.is_array() && v.size() == 1 && v[0].is_string()) r.prompt = v[0].get<std::string>();
      else if (v.is_string()) r.prompt = v.get<std::string>();
      else throw field_error(ErrorKind::kUnsupported, key, "must be a string (or a list of one string)");
      has_input = true;
    } else if (chat && key == "messages") {
      r.messages = messages_of(v);
      has_input = true;
    } else if (key == "stream") {
      r.stream = !v.is_null() && boolean_of(v, key);
    } else if (key == "stream_options") {
      stream_options = &v;
    } else if (key == "n") {
      if (v.is_null()) continue;
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxChoices)
        throw field_error(ErrorKind::kOutOfRange, key, "must be an integer in [1, " + std::to_string(kMaxChoices) + "]");
      r.n = v.get<int64_t>();
    } else if (key == "logprobs") {
      logprobs_of(v, endpoint, sampling);
    } else if (key == "max_completion_tokens" && chat) {
      if (!v.is_null()) sampling["max_tokens"] = v;
    } else if (key == "user") {
      if (!v.is_string() && !v.is_null()) throw field_error(ErrorKind::kTypeMismatch, key, "must be a string");
    } else if (key == "best_of" || key == "echo" || key == "suffix" || key == "response_format" ||
               key == "tool_choice" || key == "tools" || key == "parallel_tool_calls") {
      if ((key == "best_of" || key == "echo" || key == "suffix") && chat)
        throw field_error(ErrorKind::kInvalidArgument, key, "is not a field of /v1/chat/completions");
      default_only(key, v);
    } else {
      const auto& known = graphrt::generation_config_fields();
      if (std::find(known.begin(), known.end(), key) == known.end() || key == "logprobs")
        throw field_error(ErrorKind::kInvalidArgument, key, std::string("is not a field of /v1/") +
                                                                (chat ? "chat/completions" : "completions"));
      if (!chat && key == "top_logprobs")
        throw field_error(ErrorKind::kInvalidArgument, key, "is a chat field; completions take logprobs: k");
      sampling[key] = v;
    }
  }
  if (!has_input) throw field_error(ErrorKind::kInvalidArgument, chat ? "messages" : "prompt", "is required");
  if (stream_options && !stream_options->is_null()) {
    if (!r.stream) throw field_error(ErrorKind::kInvalidArgument, "stream_options", "needs \"stream\": true");
    if (!stream_options->is_object())
      throw field_error(ErrorKind::kTypeMismatch, "stream_options", "must be an object {include_usage}");
    for (const auto& kv : stream_options->items()) {
      if (kv.key() != "include_usage")
        throw field_error(ErrorKind::kInvalidArgument, "stream_options." + kv.key(), "is not a stream option "
                                                                                      "(include_usage)");
      r.include_usage = !kv.value().is_null() && boolean_of(kv.value(), "stream_options.include_usage");
    }
  }
  r.sampling_json = sampling.dump();
  return r;
}

graphrt::GenerationConfig openai_generation_config(const OpenAIRequest& request, const graphrt::GenerationConfig& defaults,
                                                   int64_t vocab_size) {
  graphrt::GenerationConfig config = graphrt::parse_generation_config(request.sampling_json, defaults);
  graphrt::validate_generation_config(config, vocab_size);
  return config;
}

}  // namespace graphrt_serve
