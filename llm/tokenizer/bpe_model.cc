#include "llm/tokenizer/bpe_model.h"

#include <cstdio>
#include <mutex>
#include <queue>

#include "graphrt/error.h"
#include "llm/tokenizer/byte_level_table.h"
#include "llm/tokenizer/json_fields.h"
#include "llm/tokenizer/utf8.h"

namespace graphrt::llm {
namespace {

// Words longer than this are not cached (a long word is rare and would crowd out many short
// ones); the cache is emptied when it reaches kCacheEntries, bounding its memory.
constexpr size_t kCachedWordBytes = 128;
constexpr size_t kCacheEntries = 1 << 17;

std::string byte_token_name(unsigned byte) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "<0x%02X>", byte);
  return buf;
}

}  // namespace

BpeModel::BpeModel(std::unordered_map<std::string, int32_t> vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
                   const std::string& origin, const std::string& merges_field)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  int32_t max_id = -1;
  for (const auto& entry : vocab_) max_id = entry.second > max_id ? entry.second : max_id;
  id_to_token_.resize(static_cast<size_t>(max_id + 1));
  id_present_.assign(static_cast<size_t>(max_id + 1), false);
  for (const auto& entry : vocab_) {
    id_to_token_[entry.second] = entry.first;
    id_present_[entry.second] = true;
  }
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto field = [&] { return merges_field + "[" + std::to_string(rank) + "]"; };
    const auto l = vocab_.find(left);
    const auto r = vocab_.find(right);
    if (l == vocab_.end() || r == vocab_.end()) {
      fail_field(origin, field(), "merges " + quote_cut(l == vocab_.end() ? left : right) + ", a token not in the vocabulary");
    }
    const auto merged = vocab_.find(left + right);
    if (merged == vocab_.end()) {
      fail_field(origin, field(), "makes " + quote_cut(left + right) + ", a token not in the vocabulary");
    }
    // The first (lowest-ranked) occurrence of a pair wins, as in Hugging Face's reader.
    merges_.emplace(pair_key(l->second, r->second), Merge{static_cast<int32_t>(rank), merged->second});
  }
  if (options_.unk_token) {
    const auto it = vocab_.find(*options_.unk_token);
    if (it != vocab_.end()) unk_id_ = it->second;
  }
  for (unsigned b = 0; b < 256; ++b) {
    const auto level = vocab_.find(byte_level_char(static_cast<unsigned char>(b)));
    byte_level_symbol_[b] = level == vocab_.end() ? -1 : level->second;
    const auto fallback = vocab_.find(byte_token_name(b));
    byte_fallback_id_[b] = fallback == vocab_.end() ? -1 : fallback->second;
  }
}

const std::string* BpeModel::token_of(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= id_to_token_.size() || !id_present_[id]) return nullptr;
  return &id_to_token_[id];
}

std::optional<int32_t> BpeModel::id_of(std::string_view token) const {
  const auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::initial_symbols(std::string_view word, bool byte_level, std::vector<int32_t>& symbols) const {
  bool last_was_unk = false;
  const auto push_unknown = [&](std::string_view bytes) {
    if (options_.byte_fallback) {
      bool all = true;
      for (char c : bytes) all = all && byte_fallback_id_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        for (char c : bytes) symbols.push_back(byte_fallback_id_[static_cast<unsigned char>(c)]);
        last_was_unk = false;
        return;
      }
    }
    if (!unk_id_) return;  // no unknown token: the character is dropped, as Hugging Face does
    if (!(options_.fuse_unk && last_was_unk)) symbols.push_back(*unk_id_);
    last_was_unk = true;
  };
  if (byte_level) {
    for (char c : word) {
      const int32_t id = byte_level_symbol_[static_cast<unsigned char>(c)];
      if (id >= 0) {
        symbols.push_back(id);
        last_was_unk = false;
      } else {
        push_unknown(byte_level_char(static_cast<unsigned char>(c)));
      }
    }
    return;
  }
  std::string character;
  for (size_t pos = 0; pos < word.size();) {
    size_t n = utf8_sequence_length(word, pos);
    if (n == 0) n = 1;  // callers hand valid UTF-8; a stray byte is its own symbol
    character.assign(word.data() + pos, n);
    const auto it = vocab_.find(character);
    if (it != vocab_.end()) {
      symbols.push_back(it->second);
      last_was_unk = false;
    } else {
      push_unknown(character);
    }
    pos += n;
  }
}

void BpeModel::merge_symbols(std::vector<int32_t>& symbols) const {
  const size_t n = symbols.size();
  if (n < 2) return;
  // A doubly linked list over the symbols; merging keeps the left one and unlinks the right.
  std::vector<int32_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<int32_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<int32_t>(i + 1) : -1;
  }
  struct Candidate {
    int32_t rank, pos, left, right, result;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  const auto consider = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0) return;
    const auto it = merges_.find(pair_key(symbols[pos], symbols[next[pos]]));
    if (it != merges_.end()) {
      queue.push({it->second.rank, pos, symbols[pos], symbols[next[pos]], it->second.result});
    }
  };
  for (size_t i = 0; i + 1 < n; ++i) consider(static_cast<int32_t>(i));
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    // A candidate is stale when either side has merged since: a merge only ever makes a
    // longer token, so equal ids on both sides mean the pair is still there.
    const int32_t right = next[c.pos];
    if (!alive[c.pos] || right < 0 || symbols[c.pos] != c.left || symbols[right] != c.right) continue;
    symbols[c.pos] = c.result;
    alive[right] = false;
    next[c.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = c.pos;
    consider(prev[c.pos]);
    consider(c.pos);
  }
  size_t out = 0;
  for (int32_t i = 0; i >= 0; i = next[i]) symbols[out++] = symbols[i];
  symbols.resize(out);
}

void BpeModel::encode_word(std::string_view word, bool byte_level, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  const bool cacheable = word.size() <= kCachedWordBytes;
  std::string key;
  if (cacheable) {
    key.assign(word);
    std::shared_lock<std::shared_mutex> lock(cache_mutex_);
    const auto it = cache_.find(key);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> symbols;
  if (options_.ignore_merges) {
    const auto it = vocab_.find(byte_level ? byte_level_encode(word) : std::string(word));
    if (it != vocab_.end()) symbols.push_back(it->second);
  }
  if (symbols.empty()) {
    symbols.reserve(word.size());
    initial_symbols(word, byte_level, symbols);
    merge_symbols(symbols);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
  if (cacheable) {
    std::unique_lock<std::shared_mutex> lock(cache_mutex_);
    if (cache_.size() >= kCacheEntries) cache_.clear();
    cache_.emplace(std::move(key), std::move(symbols));
  }
}

}  // namespace graphrt::llm
