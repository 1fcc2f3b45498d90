#include "llm/tokenizer/json_fields.h"

#include <cstdio>

#include "graphrt/error.h"

namespace graphrt::llm {

nlohmann::json parse_json(std::string_view text, const std::string& origin) {
  // The callback sees each value's depth as it is parsed: deep input stops there.
  const nlohmann::json::parser_callback_t depth_bound = [&](int depth, nlohmann::json::parse_event_t,
                                                            nlohmann::json&) {
    if (depth > kMaxJsonDepth) {
      throw Error("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), depth_bound);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("malformed JSON: ") + e.what()).with("file", origin);
  } catch (Error& e) {
    throw e.with("file", origin);
  }
}

std::string quote_cut(std::string_view s, size_t limit) {
  std::string out = "'";
  const size_t n = s.size() < limit ? s.size() : limit;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F || c == '\'' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += n < s.size() ? "'..." : "'";
  return out;
}

void fail_field(const std::string& origin, const std::string& path, const std::string& what) {
  throw Error(origin + ": " + (path.empty() ? std::string("the document") : "'" + path + "'") + " " + what)
      .with("file", origin)
      .with("field", path);
}

JsonAt JsonAt::member(const char* key) const {
  const nlohmann::json& obj = object();
  const auto it = obj.find(key);
  std::string sub = path.empty() ? key : path + "." + key;
  if (it == obj.end()) fail_field(origin, sub, "is missing");
  return JsonAt{*it, origin, std::move(sub)};
}

JsonAt JsonAt::member_or_null(const char* key) const {
  static const nlohmann::json null_value;
  if (has(key)) return member(key);
  return JsonAt{null_value, origin, path.empty() ? key : path + "." + key};
}

JsonAt JsonAt::element(size_t index) const {
  const nlohmann::json& arr = array();
  std::string sub = path + "[" + std::to_string(index) + "]";
  if (index >= arr.size()) fail_field(origin, sub, "is missing");
  return JsonAt{arr[index], origin, std::move(sub)};
}

bool JsonAt::has(const char* key) const { return value.is_object() && value.contains(key); }

bool JsonAt::has_non_null(const char* key) const {
  if (!value.is_object()) return false;
  const auto it = value.find(key);
  return it != value.end() && !it->is_null();
}

const nlohmann::json& JsonAt::object() const {
  if (!value.is_object()) fail(std::string("is not an object (") + value.type_name() + ")");
  return value;
}

const nlohmann::json& JsonAt::array() const {
  if (!value.is_array()) fail(std::string("is not an array (") + value.type_name() + ")");
  return value;
}

std::string JsonAt::string() const {
  if (!value.is_string()) fail(std::string("is not a string (") + value.type_name() + ")");
  return value.get<std::string>();
}

bool JsonAt::boolean() const {
  if (!value.is_boolean()) fail(std::string("is not a boolean (") + value.type_name() + ")");
  return value.get<bool>();
}

int64_t JsonAt::integer(int64_t min, int64_t max) const {
  if (!value.is_number_integer()) fail(std::string("is not an integer (") + value.type_name() + ")");
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max)) {
    fail("is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  const int64_t v = value.get<int64_t>();
  if (v < min || v > max) {
    fail(std::to_string(v) + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return v;
}

double JsonAt::number() const {
  if (!value.is_number()) fail(std::string("is not a number (") + value.type_name() + ")");
  return value.get<double>();
}

std::string JsonAt::string_or(const char* key, const std::string& fallback) const {
  return has_non_null(key) ? member(key).string() : fallback;
}

bool JsonAt::bool_or(const char* key, bool fallback) const {
  return has_non_null(key) ? member(key).boolean() : fallback;
}

}  // namespace graphrt::llm
