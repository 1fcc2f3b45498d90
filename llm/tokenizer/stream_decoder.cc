// graphrt::StreamDecoder, as MLC's streamer: the last emitted tokens are kept as context, so
// a decoder that reads a token differently at the start of the text (Metaspace, Strip) gives
// the same text piecewise as whole; a token whose text ends in U+FFFD (an incomplete
// character) is held, up to 3 of them, until the character completes.
#include "graphrt/tokenizer.h"

#include "llm/tokenizer/utf8.h"

namespace graphrt {
namespace {

constexpr size_t kMaxHeldTokens = 3;  // a character has at most 4 bytes

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool ends_with_replacement(const std::string& s) {
  const auto& r = llm::kReplacementCharacter;
  return s.size() >= r.size() && s.compare(s.size() - r.size(), r.size(), r.data(), r.size()) == 0;
}

std::vector<int32_t> joined(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int32_t> out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

StreamDecoder::StreamDecoder(Tokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}

std::string StreamDecoder::push(int32_t id) {
  pending_.push_back(id);
  const std::string before = tokenizer_.decode(prefix_);
  std::string after = tokenizer_.decode(joined(prefix_, pending_));
  std::vector<int32_t> held;
  std::string delta;
  if (starts_with(after, before)) {
    delta = after.substr(before.size());
    while (ends_with_replacement(delta) && held.size() < kMaxHeldTokens && !pending_.empty()) {
      held.insert(held.begin(), pending_.back());
      pending_.pop_back();
      after = tokenizer_.decode(joined(prefix_, pending_));
      delta = starts_with(after, before) ? after.substr(before.size()) : std::string();
    }
  } else {
    // A later token changed the text already emitted: wait for a few more, then find the
    // longest run of pending tokens that extends it.
    if (pending_.size() < kMaxHeldTokens) return "";
    bool extends = false;
    for (size_t k = 0; k < kMaxHeldTokens && pending_.size() > 1; ++k) {
      held.insert(held.begin(), pending_.back());
      pending_.pop_back();
      after = tokenizer_.decode(joined(prefix_, pending_));
      if (starts_with(after, before)) {
        delta = after.substr(before.size());
        extends = true;
        break;
      }
    }
    if (!extends) {
      pending_.insert(pending_.end(), held.begin(), held.end());
      held.clear();
      delta = tokenizer_.decode(pending_);
    }
  }
  if (!pending_.empty()) prefix_ = pending_;
  pending_ = std::move(held);
  return delta;
}

std::string StreamDecoder::finish() {
  std::string rest;
  if (!pending_.empty()) {
    const std::string before = tokenizer_.decode(prefix_);
    const std::string after = tokenizer_.decode(joined(prefix_, pending_));
    rest = starts_with(after, before) ? after.substr(before.size()) : tokenizer_.decode(pending_);
  }
  prefix_.clear();
  pending_.clear();
  return rest;
}

}  // namespace graphrt
