// Reading the tokenizers' JSON files (tokenizer.json, vocab.json, added_tokens.json,
// tokenizer_config.json, tokenizer_info): parsed with a bound on nesting, and typed field
// access whose errors name the file and the field ("model.merges[12]").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace graphrt::llm {

// Nesting deeper than this is refused: the files read here nest a few levels (a Sequence of
// decoders in a Sequence); hostile input must not cost stack or time.
constexpr int kMaxJsonDepth = 64;

// `text` parsed; malformed or too deep JSON is an invalid-argument error naming `origin`.
nlohmann::json parse_json(std::string_view text, const std::string& origin);

// `s` for an error message: quoted, control bytes escaped, cut after `limit` bytes.
std::string quote_cut(std::string_view s, size_t limit = 48);

// An error [file, field] about the field at `path` of `origin`.
[[noreturn]] void fail_field(const std::string& origin, const std::string& path, const std::string& what);

// A JSON value with the file and the path it was found at, for errors.
struct JsonAt {
  const nlohmann::json& value;
  const std::string& origin;
  std::string path;

  JsonAt member(const char* key) const;
  // The member, or a JSON null at its path when absent.
  JsonAt member_or_null(const char* key) const;
  JsonAt element(size_t index) const;
  bool has(const char* key) const;
  // True when the member is there and not null.
  bool has_non_null(const char* key) const;

  const nlohmann::json& object() const;  // refused unless an object
  const nlohmann::json& array() const;   // refused unless an array
  std::string string() const;
  bool boolean() const;
  int64_t integer(int64_t min, int64_t max) const;
  double number() const;

  std::string string_or(const char* key, const std::string& fallback) const;
  bool bool_or(const char* key, bool fallback) const;
  [[noreturn]] void fail(const std::string& what) const { fail_field(origin, path, what); }
};

}  // namespace graphrt::llm
