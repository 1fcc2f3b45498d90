#include "graphrt/generation_config.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "graphrt/error.h"
#include "llm/tokenizer/json_fields.h"

namespace graphrt {
namespace {

using llm::JsonAt;
using llm::JsonDoc;

// A generation config is a request's few fields, or the model's mlc-chat-config.json (as its
// reader allows); neither nests beyond a list.
constexpr JsonLimits kConfigLimits{size_t(16) << 20, 64};

constexpr int64_t kMaxTopLogprobs = 5;  // MLC's CPU sampler's limit

Error field_error(const std::string& field, const std::string& message) {
  return Error(ErrorKind::kInvalidArgument, field + " " + message).with("field", field);
}

// Untrusted text in a message: quoted, cut.
std::string quoted(const std::string& text) { return quote_untrusted(text, 40); }

std::string number_text(double value) {
  std::string text = std::to_string(value);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

void check_range(const std::string& field, double value, double low, double high) {
  if (!std::isfinite(value) || value < low || value > high) {
    throw field_error(field, "must be in [" + number_text(low) + ", " + number_text(high) + "], got " +
                                 number_text(value));
  }
}

void check_token(const std::string& field, int64_t token, int64_t vocab_size) {
  if (token < 0 || (vocab_size > 0 && token >= vocab_size)) {
    throw field_error(field, "names token " + std::to_string(token) + ", outside the vocabulary" +
                                 (vocab_size > 0 ? " [0, " + std::to_string(vocab_size) + ")" : ""));
  }
}

double number_of(const std::string& field, const JsonAt& value) {
  if (value.type() != JsonType::kNumber) {
    throw field_error(field, "must be a number, got " + std::string(json_type_name(value.type())));
  }
  return value.number();
}

int64_t integer_of(const std::string& field, const JsonAt& value) {
  const JsonType type = value.type();
  if (type != JsonType::kNumber) {
    throw field_error(field, "must be an integer, got " + std::string(json_type_name(type)));
  }
  if (value.is_integer()) return value.integer(INT64_MIN, INT64_MAX);
  JsonReader r = value.reader();
  uint64_t big = 0;
  if (r.read_unsigned(&big)) throw field_error(field, "is too large");
  // A fraction, an exponent, or an integer below int64's range: a whole double is taken.
  const double d = value.number();
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
  throw field_error(field, "must be an integer, got " + number_text(d));
}

int32_t checked_token(const std::string& field, int64_t token) {
  check_token(field, token, 0);
  if (token > std::numeric_limits<int32_t>::max()) throw field_error(field, "names token " + std::to_string(token) + ", outside the vocabulary");
  return static_cast<int32_t>(token);
}

int32_t token_of(const std::string& field, const JsonAt& value) {
  return checked_token(field, integer_of(field, value));
}

std::vector<std::string> stop_strings_of(const JsonAt& value) {
  if (value.is_string()) return {value.string()};
  if (!value.is_array()) throw field_error("stop", "must be a string or a list of strings");
  std::vector<std::string> stops;
  for (size_t i = 0; i < value.size(); ++i) {
    const JsonAt item = value.element(i);
    if (!item.is_string()) throw field_error("stop", "must be a string or a list of strings");
    stops.push_back(item.string());
  }
  return stops;
}

std::map<int32_t, float> logit_bias_of(const JsonAt& value) {
  if (!value.is_object()) throw field_error("logit_bias", "must be an object of token id to bias");
  std::map<int32_t, float> bias;
  value.each_member([&](const std::string& key, const JsonAt& entry) {
    size_t used = 0;
    long long token = -1;
    try {
      token = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != key.size()) throw field_error("logit_bias", "key " + quoted(key) + " is not a token id");
    const int32_t id = checked_token("logit_bias", token);
    bias[id] = static_cast<float>(number_of("logit_bias", entry));
  });
  return bias;
}

using Setter = std::function<void(GenerationConfig&, const JsonAt&)>;

const std::vector<std::pair<std::string, Setter>>& setters() {
  static const std::vector<std::pair<std::string, Setter>> table = {
      {"temperature", [](GenerationConfig& c, const JsonAt& v) { c.temperature = number_of("temperature", v); }},
      {"top_p", [](GenerationConfig& c, const JsonAt& v) { c.top_p = number_of("top_p", v); }},
      {"top_k", [](GenerationConfig& c, const JsonAt& v) { c.top_k = integer_of("top_k", v); }},
      {"presence_penalty",
       [](GenerationConfig& c, const JsonAt& v) { c.presence_penalty = number_of("presence_penalty", v); }},
      {"frequency_penalty",
       [](GenerationConfig& c, const JsonAt& v) { c.frequency_penalty = number_of("frequency_penalty", v); }},
      {"repetition_penalty",
       [](GenerationConfig& c, const JsonAt& v) { c.repetition_penalty = number_of("repetition_penalty", v); }},
      {"logit_bias", [](GenerationConfig& c, const JsonAt& v) { c.logit_bias = logit_bias_of(v); }},
      {"seed", [](GenerationConfig& c, const JsonAt& v) { c.seed = integer_of("seed", v); }},
      {"max_tokens", [](GenerationConfig& c, const JsonAt& v) { c.max_tokens = integer_of("max_tokens", v); }},
      {"stop", [](GenerationConfig& c, const JsonAt& v) { c.stop = stop_strings_of(v); }},
      {"stop_token_ids",
       [](GenerationConfig& c, const JsonAt& v) {
         if (!v.is_array()) throw field_error("stop_token_ids", "must be a list of token ids");
         c.stop_token_ids.clear();
         for (size_t i = 0; i < v.size(); ++i) c.stop_token_ids.push_back(token_of("stop_token_ids", v.element(i)));
       }},
      {"logprobs",
       [](GenerationConfig& c, const JsonAt& v) {
         if (v.type() != JsonType::kBool) throw field_error("logprobs", "must be true or false");
         c.logprobs = v.boolean();
       }},
      {"top_logprobs", [](GenerationConfig& c, const JsonAt& v) { c.top_logprobs = integer_of("top_logprobs", v); }},
  };
  return table;
}

// The root of `doc`, refused unless an object; malformed text is refused by the document itself,
// with the byte where it goes wrong.
JsonAt object_of(const JsonDoc& doc) {
  const JsonAt root = doc.root();
  if (!root.is_object()) throw Error(ErrorKind::kInvalidArgument, doc.origin() + " is not a JSON object");
  return root;
}

}  // namespace

const std::vector<std::string>& generation_config_fields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& entry : setters()) list.push_back(entry.first);
    return list;
  }();
  return names;
}

void validate_generation_config(const GenerationConfig& c, int64_t vocab_size) {
  check_range("temperature", c.temperature, 0.0, std::numeric_limits<double>::max());
  check_range("top_p", c.top_p, 0.0, 1.0);
  if (c.top_k < 0) throw field_error("top_k", "must be 0 (off) or positive, got " + std::to_string(c.top_k));
  check_range("presence_penalty", c.presence_penalty, -2.0, 2.0);
  check_range("frequency_penalty", c.frequency_penalty, -2.0, 2.0);
  if (!std::isfinite(c.repetition_penalty) || c.repetition_penalty <= 0) {
    throw field_error("repetition_penalty", "must be positive, got " + number_text(c.repetition_penalty));
  }
  for (const auto& [token, bias] : c.logit_bias) {
    check_token("logit_bias", token, vocab_size);
    check_range("logit_bias", bias, -100.0, 100.0);
  }
  if (c.max_tokens < -1 || c.max_tokens == 0) {
    throw field_error("max_tokens", "must be at least 1 (or absent for no limit), got " + std::to_string(c.max_tokens));
  }
  for (const std::string& stop : c.stop) {
    if (stop.empty()) throw field_error("stop", "holds an empty string");
  }
  for (int32_t token : c.stop_token_ids) check_token("stop_token_ids", token, vocab_size);
  if (c.top_logprobs < 0 || c.top_logprobs > kMaxTopLogprobs) {
    throw field_error("top_logprobs", "must be in [0, " + std::to_string(kMaxTopLogprobs) + "], got " +
                                          std::to_string(c.top_logprobs));
  }
  if (c.top_logprobs > 0 && !c.logprobs) throw field_error("top_logprobs", "needs logprobs");
}

GenerationConfig parse_generation_config(std::string_view text, const GenerationConfig& base) {
  const JsonDoc doc(text, "the generation config", kConfigLimits, nullptr);
  const JsonAt object = object_of(doc);
  GenerationConfig config = base;
  // Members in the order of their names, the last of a repeated name (as before the move to the
  // base reader).
  object.each_member([&](const std::string& key, const JsonAt& value) {
    const auto& table = setters();
    auto entry = std::find_if(table.begin(), table.end(), [&](const auto& e) { return e.first == key; });
    if (entry == table.end()) {
      std::string known;
      for (const auto& e : table) known += (known.empty() ? "" : ", ") + e.first;
      throw Error(ErrorKind::kInvalidArgument, "unknown generation parameter " + quoted(key) + " (known: " + known + ")")
          .with("field", shown_name(key, 40));
    }
    if (value.is_null()) return;
    entry->second(config, value);
  });
  validate_generation_config(config);
  return config;
}

GenerationConfig generation_defaults_from_chat_config(std::string_view text) {
  const JsonDoc doc(text, "mlc-chat-config.json", kConfigLimits, nullptr);
  const JsonAt object = object_of(doc);
  GenerationConfig config;
  const std::pair<const char*, double GenerationConfig::*> fields[] = {
      {"temperature", &GenerationConfig::temperature},
      {"top_p", &GenerationConfig::top_p},
      {"presence_penalty", &GenerationConfig::presence_penalty},
      {"frequency_penalty", &GenerationConfig::frequency_penalty},
  };
  for (const auto& [name, member] : fields) {
    if (object.has_non_null(name)) config.*member = number_of(name, object.member(name));
  }
  validate_generation_config(config);
  return config;
}

}  // namespace graphrt
