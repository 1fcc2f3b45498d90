// Added tokens (tokenizer.json's `added_tokens`): found whole in the text before it is split,
// each match becoming its id directly. The leftmost match wins, the longest at one position,
// as Hugging Face's matcher does; lstrip / rstrip take the whitespace beside a match with it
// and single_word refuses a match that touches a word character.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/tokenizer.h"

namespace graphrt::llm {

class AddedVocabulary {
 public:
  explicit AddedVocabulary(std::vector<AddedToken> tokens);

  struct Segment {
    size_t begin, end;
    int32_t id;  // the added token matched there, or -1 for text between matches
  };
  // `text` cut at the matches of the tokens whose `normalized` flag equals `normalized`.
  std::vector<Segment> split(std::string_view text, bool normalized) const;

  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  // The longest token starting at text[pos] of the given kind, or -1 (an index into tokens_).
  int longest_at(std::string_view text, size_t pos, bool normalized) const;

  std::vector<AddedToken> tokens_;
  std::array<std::vector<int>, 256> by_first_byte_;  // indices, longest content first
};

}  // namespace graphrt::llm
