#include "llm/tokenizer/added_vocabulary.h"

#include <algorithm>

namespace graphrt::llm {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// A word character for single_word: ASCII letters, digits and '_', and any non-ASCII byte (the
// letters of other scripts; a rare flag, so the approximation stays local).
bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_';
}

}  // namespace

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].content.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(static_cast<int>(i));
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](int a, int b) { return tokens_[a].content.size() > tokens_[b].content.size(); });
  }
}

int AddedVocabulary::longest_at(std::string_view text, size_t pos, bool normalized) const {
  for (int index : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
    const AddedToken& t = tokens_[index];
    if (t.normalized != normalized) continue;
    if (text.compare(pos, t.content.size(), t.content) == 0) return index;
  }
  return -1;
}

std::vector<AddedVocabulary::Segment> AddedVocabulary::split(std::string_view text, bool normalized) const {
  std::vector<Segment> out;
  size_t last = 0;  // end of the previous match
  for (size_t pos = 0; pos < text.size(); ++pos) {
    const int index = longest_at(text, pos, normalized);
    if (index < 0) continue;
    const AddedToken& t = tokens_[index];
    size_t begin = pos, end = pos + t.content.size();
    if (t.single_word && ((begin > 0 && is_word_byte(text[begin - 1])) || (end < text.size() && is_word_byte(text[end])))) {
      continue;
    }
    if (t.lstrip) {
      while (begin > last && is_space(text[begin - 1])) --begin;
    }
    if (t.rstrip) {
      while (end < text.size() && is_space(text[end])) ++end;
    }
    if (begin > last) out.push_back({last, begin, -1});
    out.push_back({begin, end, t.id});
    last = end;
    pos = end - 1;
  }
  if (last < text.size()) out.push_back({last, text.size(), -1});
  return out;
}

}  // namespace graphrt::llm
