// The `pattern` of tokenizer.json's Split pre-tokenizer and Replace normalizer and decoder:
// {"String": s} (literal) or {"Regex": r}.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llm/tokenizer/json_fields.h"
#include "llm/tokenizer/regex.h"

namespace graphrt::llm {

class StringPattern {
 public:
  static StringPattern literal(std::string text);
  static StringPattern regex(const std::string& pattern, const std::string& where);

  // The [begin, end) ranges of the non-empty matches, left to right.
  std::vector<std::pair<size_t, size_t>> matches(std::string_view text) const;
  std::string replace_all(std::string_view text, const std::string& content) const;

 private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;
};

StringPattern read_string_pattern(const JsonAt& at);

}  // namespace graphrt::llm
