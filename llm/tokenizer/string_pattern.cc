#include "llm/tokenizer/string_pattern.h"

#include "graphrt/error.h"

namespace graphrt::llm {

StringPattern StringPattern::literal(std::string text) {
  StringPattern p;
  p.literal_ = std::move(text);
  return p;
}

StringPattern StringPattern::regex(const std::string& pattern, const std::string& where) {
  StringPattern p;
  p.regex_ = std::make_shared<const Regex>(pattern, where);
  return p;
}

std::vector<std::pair<size_t, size_t>> StringPattern::matches(std::string_view text) const {
  if (regex_) return regex_->matches(text);
  std::vector<std::pair<size_t, size_t>> out;
  if (literal_.empty()) return out;
  for (size_t pos = text.find(literal_); pos != std::string_view::npos; pos = text.find(literal_, pos)) {
    out.emplace_back(pos, pos + literal_.size());
    pos += literal_.size();
  }
  return out;
}

std::string StringPattern::replace_all(std::string_view text, const std::string& content) const {
  std::string out;
  out.reserve(text.size());
  size_t last = 0;
  for (const auto& [begin, end] : matches(text)) {
    out.append(text.data() + last, begin - last);
    out += content;
    last = end;
  }
  out.append(text.data() + last, text.size() - last);
  return out;
}

StringPattern read_string_pattern(const JsonAt& at) {
  if (at.has("String")) return StringPattern::literal(at.member("String").string());
  if (at.has("Regex")) {
    const JsonAt regex = at.member("Regex");
    try {
      return StringPattern::regex(regex.string(), at.origin + " '" + regex.path + "'");
    } catch (Error& e) {
      throw e.with("file", at.origin).with("field", regex.path);
    }
  }
  at.fail("has neither \"String\" nor \"Regex\"");
}

}  // namespace graphrt::llm
