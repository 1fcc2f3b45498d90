// A compiled pre-tokenizer pattern (PCRE2 in UTF mode with Unicode properties, so \p{L},
// \p{N} and \s mean what the tokenizers' Rust regexes mean). Patterns come from tokenizer
// files: a match runs under a step limit, so a pattern that backtracks without end fails with
// an error instead of hanging.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace graphrt::llm {

// GPT-2's split pattern (the ByteLevel pre-tokenizer's own).
extern const char* const kGpt2SplitPattern;

class Regex {
 public:
  // Throws an invalid-argument error naming `where` (the file and field) when the pattern
  // does not compile.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // The [begin, end) byte ranges of the non-empty matches in valid UTF-8 `text`, left to
  // right, each search starting where the last match ended.
  std::vector<std::pair<size_t, size_t>> matches(std::string_view text) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
  std::string where_;
};

}  // namespace graphrt::llm
