#include "llm/tokenizer/pre_tokenizer.h"

#include "graphrt/error.h"
#include "llm/tokenizer/regex.h"
#include "llm/tokenizer/string_pattern.h"
#include "llm/tokenizer/utf8.h"

namespace graphrt::llm {
namespace {

// What becomes of the matches of a Split pattern (Hugging Face's SplitDelimiterBehavior).
enum class Delimiter { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Delimiter read_delimiter(const JsonAt& at) {
  const std::string name = at.string();
  if (name == "Removed") return Delimiter::kRemoved;
  if (name == "Isolated") return Delimiter::kIsolated;
  if (name == "MergedWithPrevious") return Delimiter::kMergedWithPrevious;
  if (name == "MergedWithNext") return Delimiter::kMergedWithNext;
  if (name == "Contiguous") return Delimiter::kContiguous;
  at.fail("is " + quote_cut(name) + ", not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

// Cuts `piece` at `matches` (ranges into its text) per `behavior`; `invert` swaps what counts
// as a match. Appends the non-empty parts to `out`.
void split_piece(const Piece& piece, const std::vector<std::pair<size_t, size_t>>& matches, Delimiter behavior,
                 bool invert, std::vector<Piece>& out) {
  struct Part {
    size_t begin, end;
    bool is_match;
  };
  std::vector<Part> parts;
  size_t last = 0;
  for (const auto& [begin, end] : matches) {
    if (begin > last) parts.push_back({last, begin, invert});
    parts.push_back({begin, end, !invert});
    last = end;
  }
  if (last < piece.text.size()) parts.push_back({last, piece.text.size(), invert});

  std::vector<std::pair<size_t, size_t>> kept;
  bool previous_was_match = false;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    switch (behavior) {
      case Delimiter::kRemoved:
        if (!p.is_match) kept.emplace_back(p.begin, p.end);
        break;
      case Delimiter::kIsolated:
        kept.emplace_back(p.begin, p.end);
        break;
      case Delimiter::kMergedWithPrevious:
        if (p.is_match && !kept.empty() && !previous_was_match) kept.back().second = p.end;
        else kept.emplace_back(p.begin, p.end);
        break;
      case Delimiter::kMergedWithNext:
        if (!p.is_match && previous_was_match && !kept.empty()) kept.back().second = p.end;
        else kept.emplace_back(p.begin, p.end);
        break;
      case Delimiter::kContiguous:
        if (p.is_match && previous_was_match && !kept.empty()) kept.back().second = p.end;
        else kept.emplace_back(p.begin, p.end);
        break;
    }
    previous_was_match = p.is_match;
  }
  for (const auto& [begin, end] : kept) {
    if (end > begin) out.push_back({piece.text.substr(begin, end - begin), piece.at_text_start && begin == 0});
  }
}

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(StringPattern pattern, Delimiter behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    out.reserve(pieces.size());
    for (const Piece& piece : pieces) split_piece(piece, pattern_.matches(piece.text), behavior_, invert_, out);
    pieces.swap(out);
  }

 private:
  StringPattern pattern_;
  Delimiter behavior_;
  bool invert_;
};

// ByteLevel: optionally a space before each piece, optionally GPT-2's regex split; the pieces
// are then read as byte-level characters by the model.
class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex) : add_prefix_space_(add_prefix_space) {
    if (use_regex) gpt2_split_ = std::make_unique<SplitPreTokenizer>(
        StringPattern::regex(kGpt2SplitPattern, "GPT-2's pattern"), Delimiter::kIsolated, false);
  }
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    if (add_prefix_space_) {
      for (Piece& p : pieces) {
        if (p.text.empty() || p.text[0] != ' ') p.text.insert(0, " ");
      }
    }
    if (gpt2_split_) gpt2_split_->pre_tokenize(pieces);
  }
  bool byte_level() const override { return true; }

 private:
  bool add_prefix_space_;
  std::unique_ptr<SplitPreTokenizer> gpt2_split_;
};

enum class PrependScheme { kAlways, kFirst, kNever };

// Metaspace: spaces become the replacement ("▁"), one is put in front per prepend_scheme, and
// with `split` each "▁" starts a new word.
class MetaspacePreTokenizer : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    std::vector<Piece> out;
    for (Piece& p : pieces) {
      p.text = StringPattern::literal(" ").replace_all(p.text, replacement_);
      const bool starts = p.text.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts && (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && p.at_text_start))) {
        p.text.insert(0, replacement_);
      }
      if (!split_) {
        out.push_back(std::move(p));
        continue;
      }
      split_piece(p, StringPattern::literal(replacement_).matches(p.text), Delimiter::kMergedWithNext, false, out);
    }
    pieces.swap(out);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (const auto& step : steps_) step->pre_tokenize(pieces);
  }
  bool byte_level() const override {
    for (const auto& step : steps_) {
      if (step->byte_level()) return true;
    }
    return false;
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

PrependScheme read_prepend_scheme(const JsonAt& at) {
  if (at.has_non_null("prepend_scheme")) {
    const JsonAt field = at.member("prepend_scheme");
    const std::string name = field.string();
    if (name == "always") return PrependScheme::kAlways;
    if (name == "first") return PrependScheme::kFirst;
    if (name == "never") return PrependScheme::kNever;
    field.fail("is " + quote_cut(name) + ", not one of always, first, never");
  }
  // Files written before prepend_scheme existed say add_prefix_space.
  return at.bool_or("add_prefix_space", true) ? PrependScheme::kAlways : PrependScheme::kNever;
}

std::string read_replacement(const JsonAt& at) {
  const std::string replacement = at.string_or("replacement", "\xE2\x96\x81");
  if (replacement.empty() || utf8_sequence_length(replacement, 0) != replacement.size()) {
    at.member("replacement").fail("is " + quote_cut(replacement) + ", not one character");
  }
  return replacement;
}

[[noreturn]] void unsupported(const JsonAt& at, const std::string& type) {
  throw Error(ErrorKind::kUnsupported, at.origin + ": '" + at.path + "' has pre-tokenizer type " + quote_cut(type) +
                                           ", which graphrt does not implement")
      .with("file", at.origin)
      .with("field", at.path + ".type");
}

}  // namespace

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonAt& at) {
  if (at.is_null()) return nullptr;
  const std::string type = at.member("type").string();
  if (type == "Sequence") {
    const JsonAt list = at.member("pretokenizers");
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    bool byte_level_seen = false;
    for (size_t i = 0; i < list.size(); ++i) {
      auto step = read_pre_tokenizer(list.element(i));
      if (!step) continue;
      // A step after ByteLevel would see its raw bytes, not the byte-level characters.
      if (byte_level_seen) unsupported(list.element(i), "after ByteLevel");
      byte_level_seen = step->byte_level();
      steps.push_back(std::move(step));
    }
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPreTokenizer>(at.bool_or("add_prefix_space", true), at.bool_or("use_regex", true));
  }
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(read_string_pattern(at.member("pattern")),
                                               read_delimiter(at.member("behavior")), at.bool_or("invert", false));
  }
  if (type == "Metaspace") {
    return std::make_unique<MetaspacePreTokenizer>(read_replacement(at), read_prepend_scheme(at), at.bool_or("split", true));
  }
  if (type == "Digits") {
    const bool individual = at.bool_or("individual_digits", false);
    return std::make_unique<SplitPreTokenizer>(StringPattern::regex(individual ? R"(\p{N})" : R"(\p{N}+)", "Digits"),
                                               Delimiter::kIsolated, false);
  }
  if (type == "Whitespace") {
    return std::make_unique<SplitPreTokenizer>(StringPattern::regex(R"(\w+|[^\w\s]+)", "Whitespace"),
                                               Delimiter::kRemoved, true);
  }
  if (type == "WhitespaceSplit") {
    return std::make_unique<SplitPreTokenizer>(StringPattern::regex(R"(\s+)", "WhitespaceSplit"),
                                               Delimiter::kRemoved, false);
  }
  unsupported(at, type);
}

std::unique_ptr<PreTokenizer> gpt2_byte_level_pre_tokenizer(bool add_prefix_space) {
  return std::make_unique<ByteLevelPreTokenizer>(add_prefix_space, true);
}

}  // namespace graphrt::llm
