#include "openai/openai_request.h"

#include <algorithm>
#include <optional>

#include "graphrt/error.h"
#include "graphrt/json_reader.h"
#include "graphrt/json_writer.h"
#include "protocol/json_body.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::JsonReader;
using graphrt::JsonType;
using graphrt::JsonWriter;

namespace {

// Deep enough that the values this server refuses by their content (a tools list of JSON
// schemas, a json_schema response_format) are refused as unsupported, not as too deep.
constexpr graphrt::JsonLimits kOpenAIJsonLimits{kMaxOpenAIBodyBytes, 32};

Error field_error(ErrorKind kind, const std::string& field, const std::string& message) {
  return Error(kind, field + " " + message).with("field", field);
}

// object_unique_keys for an object inside the body: a repeated member is named by its path
// (path() + "." + the name) in the error's "field".
template <typename Path, typename Member>
void unique_members(JsonReader& r, const Path& path, Member member) {
  try {
    r.object_unique_keys(member);
  } catch (Error& e) {
    const std::string repeated = e.context_value("member");
    if (e.context_value("field").empty() && !repeated.empty()) e.with("field", path() + "." + repeated);
    throw;
  }
}

bool boolean_of(JsonReader& r, const std::string& field) {
  if (r.next_type() != JsonType::kBool) refuse_value(r, field_error(ErrorKind::kTypeMismatch, field, "must be true or false"));
  return r.read_bool();
}

// A string or null (""), as "model" and "user" are.
std::string string_or_null(JsonReader& r, const std::string& field) {
  if (r.consume_null()) return "";
  if (!r.next_is_string()) refuse_value(r, field_error(ErrorKind::kTypeMismatch, field, "must be a string"));
  return r.read_string();
}

// A message's content: a string, null, or a list of text parts (joined). Other members of a
// part than type and text are ignored.
template <typename Path>
std::optional<std::string> content_of(JsonReader& r, const Path& at) {
  const JsonType t = r.next_type();
  if (t == JsonType::kNull) {
    r.consume_null();
    return std::nullopt;
  }
  if (t == JsonType::kString) return r.read_string();
  const auto field = [&] { return at() + ".content"; };
  if (t != JsonType::kArray)
    refuse_value(r, field_error(ErrorKind::kTypeMismatch, field(), "must be a string, null or a list of text parts"));
  const auto not_text = [&] {
    return field_error(ErrorKind::kUnsupported, field(), "parts must be {\"type\": \"text\", \"text\": ...} (this "
                                                         "server takes text only)");
  };
  std::string text;
  r.array([&](size_t) {
    if (!r.next_is_object()) refuse_value(r, not_text());
    bool is_text = false, has_text = false;
    unique_members(r, field, [&](std::string_view k) {
      if (k == "type") {
        if (!r.next_is_string()) refuse_value(r, not_text());
        is_text = r.read_string() == "text";
      } else if (k == "text") {
        if (!r.next_is_string()) refuse_value(r, not_text());
        text += r.read_string();
        has_text = true;
      } else {
        r.skip_value();
      }
    });
    if (!is_text || !has_text) throw not_text();
  });
  return text;
}

std::vector<graphrt::ChatMessage> messages_of(JsonReader& r) {
  const auto not_a_list = [] {
    return field_error(ErrorKind::kInvalidArgument, "messages", "must be a non-empty list of {role, content}");
  };
  if (!r.next_is_array()) refuse_value(r, not_a_list());
  std::vector<graphrt::ChatMessage> out;
  r.array([&](size_t i) {
    // The message's path, made only for an error.
    const auto at = [i] { return "messages[" + std::to_string(i) + "]"; };
    if (!r.next_is_object()) refuse_value(r, field_error(ErrorKind::kTypeMismatch, at(), "must be an object {role, content}"));
    graphrt::ChatMessage message;
    unique_members(r, at, [&](std::string_view k) {
      if (k == "role") {
        if (!r.next_is_string()) refuse_value(r, field_error(ErrorKind::kTypeMismatch, at() + ".role", "must be a string"));
        message.role = r.read_string();
      } else if (k == "content") {
        message.content = content_of(r, at);
      } else if (k == "name") {
        r.skip_value();
      } else {
        refuse_value(r, field_error(ErrorKind::kUnsupported, at() + "." + graphrt::shown_name(std::string(k)),
                                    "is not a message field this server takes (role, content, name)"));
      }
    });
    static const char* const kRoles[] = {"system", "user", "assistant", "tool"};
    bool known = false;
    for (const char* role : kRoles) known = known || message.role == role;
    if (!known) throw field_error(ErrorKind::kInvalidArgument, at() + ".role", "must be system, user, assistant or tool");
    out.push_back(std::move(message));
  });
  if (out.empty()) throw not_a_list();
  return out;
}

// The prompt of completions: a string, or a list of one string.
std::string prompt_of(JsonReader& r) {
  const auto unsupported = [] {
    return field_error(ErrorKind::kUnsupported, "prompt", "must be a string (or a list of one string)");
  };
  if (r.next_is_string()) return r.read_string();
  if (!r.next_is_array()) refuse_value(r, unsupported());
  std::string prompt;
  size_t count = 0;
  r.array([&](size_t i) {
    if (i > 0 || !r.next_is_string()) refuse_value(r, unsupported());
    prompt = r.read_string();
    count = 1;
  });
  if (count == 0) throw unsupported();
  return prompt;
}

// OpenAI's "logprobs": the number of alternatives for completions (null: off), true/false for chat.
void logprobs_of(JsonReader& r, OpenAIEndpoint endpoint, JsonWriter& sampling) {
  if (r.consume_null()) return;
  if (endpoint == OpenAIEndpoint::kChat) {
    sampling.key("logprobs").boolean(boolean_of(r, "logprobs"));
    return;
  }
  const auto out_of_range = [] {
    return field_error(ErrorKind::kOutOfRange, "logprobs", "must be an integer in [0, 5] (or null)");
  };
  int64_t k = 0;
  if (!r.read_integer(&k)) refuse_value(r, out_of_range());
  if (k < 0 || k > 5) throw out_of_range();
  sampling.key("logprobs").boolean(true).key("top_logprobs").integer(k);
}

// response_format at its default: null or {"type": "text"} (other members ignored).
bool is_text_format(JsonReader& r) {
  if (r.consume_null()) return true;
  if (!r.next_is_object()) {
    r.skip_value();
    return false;
  }
  bool text = false;
  unique_members(r, [] { return std::string("response_format"); }, [&](std::string_view k) {
    if (k == "type" && r.next_is_string()) text = r.read_string() == "text";
    else r.skip_value();
  });
  return text;
}

// Fields OpenAI defines that this server takes only at their default (null is each one's).
void default_only(const std::string& key, JsonReader& r) {
  const JsonType t = r.next_type();
  bool ok = false;
  if (t == JsonType::kNull) {
    r.consume_null();
    ok = true;
  } else if (key == "parallel_tool_calls") {  // without tools, any value is the default's behaviour
    r.skip_value();
    ok = true;
  } else if (key == "response_format") {
    ok = is_text_format(r);
  } else if (key == "best_of" && t == JsonType::kNumber) {
    ok = r.read_double() == 1;
  } else if (key == "echo" && t == JsonType::kBool) {
    ok = !r.read_bool();
  } else if (key == "tool_choice" && t == JsonType::kString) {
    ok = r.read_string() == "none";
  } else if (key == "tools" && t == JsonType::kArray) {
    size_t count = 0;
    r.array([&](size_t) {
      r.skip_value();
      ++count;
    });
    ok = count == 0;
  } else {
    r.skip_value();
  }
  if (!ok) throw field_error(ErrorKind::kUnsupported, key, "is not supported by this server (only its default)");
}

}  // namespace

OpenAIRequest decode_openai_request(const std::string& body, OpenAIEndpoint endpoint) {
  if (body.size() > kMaxOpenAIBodyBytes)
    throw Error(ErrorKind::kOutOfRange, "the request body is " + std::to_string(body.size()) +
                                            " bytes; an OpenAI request takes at most " + std::to_string(kMaxOpenAIBodyBytes));
  const bool chat = endpoint == OpenAIEndpoint::kChat;
  OpenAIRequest out;
  out.endpoint = endpoint;
  std::string in_member;  // the top-level member being read: the field of the reader's refusals in its value
  try {
    JsonReader r(body, kOpenAIJsonLimits, "the request body");
    if (!r.next_is_object()) {
      r.skip_value();  // malformed text is reported as such first
      r.expect_end();
      throw Error(ErrorKind::kTypeMismatch, "the request body must be a JSON object");
    }
    JsonWriter sampling;  // the sampling fields, as written (parse_generation_config checks them)
    sampling.begin_object();
    bool has_input = false, has_max_tokens = false;
    size_t stream_options_at = 0;  // where its value is (read once "stream" is known); 0: not given
    r.object_unique_keys([&](std::string_view k) {
      in_member.assign(k.data(), k.size());
      if (k == "model") {
        out.model = string_or_null(r, "model");
      } else if (!chat && k == "prompt") {
        out.prompt = prompt_of(r);
        has_input = true;
      } else if (chat && k == "messages") {
        out.messages = messages_of(r);
        has_input = true;
      } else if (k == "stream") {
        out.stream = !r.consume_null() && boolean_of(r, "stream");
      } else if (k == "stream_options") {
        r.peek();
        stream_options_at = r.offset();
        r.skip_value();
      } else if (k == "n") {
        const auto bad = [] {
          return field_error(ErrorKind::kOutOfRange, "n", "must be an integer in [1, " + std::to_string(kMaxChoices) + "]");
        };
        int64_t n = 0;
        if (!r.consume_null()) {
          if (!r.read_integer(&n)) refuse_value(r, bad());
          if (n < 1 || n > kMaxChoices) throw bad();
          out.n = n;
        }
      } else if (k == "logprobs") {
        logprobs_of(r, endpoint, sampling);
      } else if (k == "user") {
        string_or_null(r, "user");
      } else if (k == "best_of" || k == "echo" || k == "suffix" || k == "response_format" || k == "tool_choice" ||
                 k == "tools" || k == "parallel_tool_calls") {
        const std::string key(k);
        if (chat && (k == "best_of" || k == "echo" || k == "suffix"))
          refuse_value(r, field_error(ErrorKind::kInvalidArgument, key, "is not a field of /v1/chat/completions"));
        default_only(key, r);
      } else {
        const bool max_tokens = k == "max_tokens" || (chat && k == "max_completion_tokens");
        if (!max_tokens) {
          const auto& known = graphrt::generation_config_fields();
          if (std::find(known.begin(), known.end(), k) == known.end())
            refuse_value(r, field_error(ErrorKind::kInvalidArgument, graphrt::shown_name(std::string(k)),
                                        std::string("is not a field of /v1/") + (chat ? "chat/completions" : "completions")));
          if (!chat && k == "top_logprobs")
            refuse_value(r, field_error(ErrorKind::kInvalidArgument, "top_logprobs",
                                        "is a chat field; completions take logprobs: k"));
        } else {
          // Both names set one limit (null keeps the model's default, as if not given).
          if (r.consume_null()) {
            in_member.clear();
            return;
          }
          if (has_max_tokens)
            refuse_value(r, field_error(ErrorKind::kInvalidArgument, std::string(k),
                                        std::string("is given with ") +
                                            (k == "max_tokens" ? "max_completion_tokens" : "max_tokens") +
                                            ": they are one limit, give one"));
          has_max_tokens = true;
          k = "max_tokens";
        }
        sampling.key(k).raw(r.raw_value());
      }
      in_member.clear();
    });
    r.expect_end();
    if (!has_input) throw field_error(ErrorKind::kInvalidArgument, chat ? "messages" : "prompt", "is required");
    if (stream_options_at != 0) {
      JsonReader s(body, kOpenAIJsonLimits, "the request body");  // the value was checked when it was skipped
      s.rewind(stream_options_at);
      if (!s.consume_null()) {
        if (!out.stream) throw field_error(ErrorKind::kInvalidArgument, "stream_options", "needs \"stream\": true");
        if (!s.next_is_object())
          throw field_error(ErrorKind::kTypeMismatch, "stream_options", "must be an object {include_usage}");
        unique_members(s, [] { return std::string("stream_options"); }, [&](std::string_view k) {
          if (k != "include_usage")
            throw field_error(ErrorKind::kInvalidArgument, "stream_options." + graphrt::shown_name(std::string(k)),
                              "is not a stream option (include_usage)");
          out.include_usage = !s.consume_null() && boolean_of(s, "stream_options.include_usage");
        });
      }
    }
    out.sampling_json = sampling.end_object().take();
  } catch (Error& e) {
    name_json_refusal(e, body, kOpenAIJsonLimits, "the request body", in_member);
    throw;
  }
  return out;
}

graphrt::GenerationConfig openai_generation_config(const OpenAIRequest& request, const graphrt::GenerationConfig& defaults,
                                                   int64_t vocab_size) {
  graphrt::GenerationConfig config = graphrt::parse_generation_config(request.sampling_json, defaults);
  graphrt::validate_generation_config(config, vocab_size);
  return config;
}

}  // namespace graphrt_serve
