// A BPE model (Hugging Face's `model: {"type": "BPE"}`, GPT-2's vocab.json + merges.txt): a
// vocabulary of token strings and a ranked list of merges. A word starts as one symbol per
// character (per byte for byte-level input) and the adjacent pair of lowest rank is merged,
// leftmost on ties, until no pair has a merge. Characters outside the vocabulary become their
// bytes' "<0xXX>" tokens (byte_fallback) or the unknown token.
//
// Words already seen are answered from a cache (bounded; shared by the threads encoding with
// one model).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace graphrt::llm {

struct BpeOptions {
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;  // a word found whole in the vocabulary is that one token
};

class BpeModel {
 public:
  // `vocab` maps token strings to ids (ids need not be dense); `merges` are the pairs in rank
  // order. A merge naming a token outside the vocabulary, or whose result is outside it, is
  // an error naming `origin` and the merge's field (`merges_field` + "[rank]").
  BpeModel(std::unordered_map<std::string, int32_t> vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
           const std::string& origin, const std::string& merges_field);

  // Appends the ids of one word. `byte_level`: the word is raw bytes, each standing for its
  // GPT-2 byte-level character; else it is UTF-8 text whose characters are the symbols.
  void encode_word(std::string_view word, bool byte_level, std::vector<int32_t>& out) const;

  // One more than the largest id.
  size_t id_bound() const { return id_to_token_.size(); }
  const std::string* token_of(int32_t id) const;
  std::optional<int32_t> id_of(std::string_view token) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  void initial_symbols(std::string_view word, bool byte_level, std::vector<int32_t>& symbols) const;
  void merge_symbols(std::vector<int32_t>& symbols) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<bool> id_present_;
  std::unordered_map<uint64_t, Merge> merges_;
  BpeOptions options_;
  std::optional<int32_t> unk_id_;
  std::array<int32_t, 256> byte_level_symbol_;  // id of each byte's byte-level character, or -1
  std::array<int32_t, 256> byte_fallback_id_;   // id of "<0xXX>", or -1

  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace graphrt::llm
