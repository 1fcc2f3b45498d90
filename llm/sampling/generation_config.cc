#include "graphrt/generation_config.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "graphrt/error.h"

namespace graphrt {
namespace {

using json = nlohmann::json;

constexpr int64_t kMaxTopLogprobs = 5;  // MLC's CPU sampler's limit

Error field_error(const std::string& field, const std::string& message) {
  return Error(ErrorKind::kInvalidArgument, field + " " + message).with("field", field);
}

// Untrusted text in a message: quoted, cut.
std::string quoted(const std::string& text) {
  constexpr size_t kLimit = 40;
  return "'" + (text.size() > kLimit ? text.substr(0, kLimit) + "..." : text) + "'";
}

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

double number_of(const std::string& field, const json& value) {
  if (!value.is_number()) throw field_error(field, "must be a number, got " + std::string(value.type_name()));
  return value.get<double>();
}

int64_t integer_of(const std::string& field, const json& value) {
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
    throw field_error(field, "must be an integer, got " + number_text(d));
  }
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw field_error(field, "is too large");
  }
  if (!value.is_number_integer()) throw field_error(field, "must be an integer, got " + std::string(value.type_name()));
  return value.get<int64_t>();
}

int32_t token_of(const std::string& field, const json& value) {
  const int64_t token = integer_of(field, value);
  check_token(field, token, 0);
  if (token > std::numeric_limits<int32_t>::max()) throw field_error(field, "names token " + std::to_string(token) + ", outside the vocabulary");
  return static_cast<int32_t>(token);
}

std::vector<std::string> stop_strings_of(const json& value) {
  if (value.is_string()) return {value.get<std::string>()};
  if (!value.is_array()) throw field_error("stop", "must be a string or a list of strings");
  std::vector<std::string> stops;
  for (const json& item : value) {
    if (!item.is_string()) throw field_error("stop", "must be a string or a list of strings");
    stops.push_back(item.get<std::string>());
  }
  return stops;
}

std::map<int32_t, float> logit_bias_of(const json& value) {
  if (!value.is_object()) throw field_error("logit_bias", "must be an object of token id to bias");
  std::map<int32_t, float> bias;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    size_t used = 0;
    long long token = -1;
    try {
      token = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != key.size()) throw field_error("logit_bias", "key " + quoted(key) + " is not a token id");
    const int32_t id = token_of("logit_bias", json(token));
    bias[id] = static_cast<float>(number_of("logit_bias", it.value()));
  }
  return bias;
}

using Setter = std::function<void(GenerationConfig&, const json&)>;

const std::vector<std::pair<std::string, Setter>>& setters() {
  static const std::vector<std::pair<std::string, Setter>> table = {
      {"temperature", [](GenerationConfig& c, const json& v) { c.temperature = number_of("temperature", v); }},
      {"top_p", [](GenerationConfig& c, const json& v) { c.top_p = number_of("top_p", v); }},
      {"top_k", [](GenerationConfig& c, const json& v) { c.top_k = integer_of("top_k", v); }},
      {"presence_penalty", [](GenerationConfig& c, const json& v) { c.presence_penalty = number_of("presence_penalty", v); }},
      {"frequency_penalty", [](GenerationConfig& c, const json& v) { c.frequency_penalty = number_of("frequency_penalty", v); }},
      {"repetition_penalty", [](GenerationConfig& c, const json& v) { c.repetition_penalty = number_of("repetition_penalty", v); }},
      {"logit_bias", [](GenerationConfig& c, const json& v) { c.logit_bias = logit_bias_of(v); }},
      {"seed", [](GenerationConfig& c, const json& v) { c.seed = integer_of("seed", v); }},
      {"max_tokens", [](GenerationConfig& c, const json& v) { c.max_tokens = integer_of("max_tokens", v); }},
      {"stop", [](GenerationConfig& c, const json& v) { c.stop = stop_strings_of(v); }},
      {"stop_token_ids",
       [](GenerationConfig& c, const json& v) {
         if (!v.is_array()) throw field_error("stop_token_ids", "must be a list of token ids");
         c.stop_token_ids.clear();
         for (const json& id : v) c.stop_token_ids.push_back(token_of("stop_token_ids", id));
       }},
      {"logprobs",
       [](GenerationConfig& c, const json& v) {
         if (!v.is_boolean()) throw field_error("logprobs", "must be true or false");
         c.logprobs = v.get<bool>();
       }},
      {"top_logprobs", [](GenerationConfig& c, const json& v) { c.top_logprobs = integer_of("top_logprobs", v); }},
  };
  return table;
}

json parse_object(std::string_view text, const char* what) {
  json value = json::parse(text.begin(), text.end(), nullptr, false);
  if (value.is_discarded() || !value.is_object()) {
    throw Error(ErrorKind::kInvalidArgument, std::string(what) + " is not a JSON object");
  }
  return value;
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
  const json object = parse_object(text, "the generation config");
  GenerationConfig config = base;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const auto& table = setters();
    auto entry = std::find_if(table.begin(), table.end(), [&](const auto& e) { return e.first == it.key(); });
    if (entry == table.end()) {
      std::string known;
      for (const auto& e : table) known += (known.empty() ? "" : ", ") + e.first;
      throw Error(ErrorKind::kInvalidArgument, "unknown generation parameter " + quoted(it.key()) + " (known: " + known + ")")
          .with("field", it.key().substr(0, 40));
    }
    if (it.value().is_null()) continue;
    entry->second(config, it.value());
  }
  validate_generation_config(config);
  return config;
}

GenerationConfig generation_defaults_from_chat_config(std::string_view text) {
  const json object = parse_object(text, "mlc-chat-config.json");
  GenerationConfig config;
  const std::pair<const char*, double GenerationConfig::*> fields[] = {
      {"temperature", &GenerationConfig::temperature},
      {"top_p", &GenerationConfig::top_p},
      {"presence_penalty", &GenerationConfig::presence_penalty},
      {"frequency_penalty", &GenerationConfig::frequency_penalty},
  };
  for (const auto& [name, member] : fields) {
    auto it = object.find(name);
    if (it != object.end() && !it->is_null()) config.*member = number_of(name, *it);
  }
  validate_generation_config(config);
  return config;
}

}  // namespace graphrt
