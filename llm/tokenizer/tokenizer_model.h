// What every tokenizer format provides behind graphrt::Tokenizer (tokenizer.json's pipeline,
// SentencePiece, GPT-2's vocab.json + merges.txt), and what the public face keeps beside it:
// the tokenizer_info, the added tokens and the table of each token's bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/tokenizer.h"

namespace graphrt::detail {

class TokenizerModel {
 public:
  virtual ~TokenizerModel() = default;

  // `text` is valid UTF-8.
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // Every id is below vocab_size().
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual size_t vocab_size() const = 0;
  // The token's own string, or null for an id naming no token.
  virtual const std::string* token_of(int32_t id) const = 0;
  virtual std::optional<int32_t> id_of(std::string_view token) const = 0;
  // A token of the format's own that is special besides the added tokens (SentencePiece's
  // control pieces, <s> and </s>).
  virtual bool special_piece(int32_t) const { return false; }

  // Set by the format's reader, then `complete` fills the rest.
  TokenizerInfo info;
  std::string kind;
  std::vector<AddedToken> added_tokens;

  // Fills token_bytes and special from the vocabulary, the added tokens and info.
  void complete();
  std::vector<std::string> token_bytes;
  std::vector<bool> special;
};

}  // namespace graphrt::detail
