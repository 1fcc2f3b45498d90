// Text to token ids and back, for the language models MLC-LLM ships: Hugging Face's
// tokenizer.json (byte-level BPE as GPT-2, Llama-3 and Qwen write it; byte-fallback BPE with
// Metaspace as Llama-2 and Mistral write it), SentencePiece's tokenizer.model, and GPT-2's
// vocab.json + merges.txt.
//
//   graphrt::Tokenizer tok = graphrt::Tokenizer::from_folder("dist/model");
//   std::vector<int32_t> ids = tok.encode("Hello, world!");   // [15496, 11, 995, 0] for GPT-2
//   std::string text = tok.decode(ids);
//   graphrt::StreamDecoder stream(tok);
//   for (int32_t id : ids) std::cout << stream.push(id);      // whole UTF-8 characters only
//   std::cout << stream.finish();
//
// As MLC's runtime does: encoding adds no special token (a BOS comes from the conversation
// template), added and special tokens typed in the text are recognised, decoding skips none.
// A Tokenizer is immutable once made and cheap to copy (the copies share one model); encode
// and decode may be called from several threads at once. Errors are graphrt::Error naming the
// file and the field or line at fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graphrt/export.h"

namespace graphrt {
namespace detail {
class TokenizerModel;  // the library's own (not exported)
}
}  // namespace graphrt

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// mlc-chat-config.json's `tokenizer_info`: how a token's text maps to the bytes it stands for
// (the token table of stop strings, logprobs and grammars), and two encoding flags MLC keeps.
struct TokenizerInfo {
  enum class TokenPostproc {
    kByteFallback,  // "byte_fallback": "<0xXX>" is that byte, "▁" a space (Llama-2, SentencePiece)
    kByteLevel,     // "byte_level": GPT-2's byte<->character table inverted
  };
  TokenPostproc token_postproc_method = TokenPostproc::kByteFallback;
  bool prepend_space_in_encode = false;
  bool strip_space_in_decode = false;

  // Reads the `tokenizer_info` object's JSON text (absent keys keep their defaults, as MLC's);
  // errors name `origin` (the config file) and the field.
  static TokenizerInfo from_json_text(const std::string& json_text, const std::string& origin);
  // What MLC detects from a tokenizer.json's text when the config has no tokenizer_info: a
  // ByteLevel decoder is byte_level, else byte_fallback; a Prepend("▁") normalizer sets
  // prepend_space_in_encode, a Strip(" ", 1, 0) decoder strip_space_in_decode.
  static TokenizerInfo detect_from_tokenizer_json(const std::string& json_text, const std::string& origin);
};

// A token of tokenizer.json's `added_tokens` (or of a vocab.json folder's added_tokens.json
// and tokenizer_config.json): matched whole in the text before anything else is tokenized.
struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool single_word = false;  // only where no word character touches it
  bool lstrip = false;       // the match takes the whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool normalized = false;   // matched in the normalized text instead of the raw one
};

class Tokenizer {
 public:
  // The tokenizer of a model folder, found as MLC's runtime probes it: tokenizer.json, else
  // tokenizer.model (SentencePiece), else vocab.json + merges.txt (+ added_tokens.json,
  // tokenizer_config.json's special tokens). `info` is mlc-chat-config.json's tokenizer_info;
  // null detects it as MLC does. A folder with none of these is a not-found error naming it.
  static Tokenizer from_folder(const std::string& folder, const TokenizerInfo* info = nullptr);
  // One format, from its files (`origin` names the text in errors).
  static Tokenizer from_tokenizer_json(const std::string& path, const TokenizerInfo* info = nullptr);
  static Tokenizer from_tokenizer_json_text(const std::string& json_text, const std::string& origin,
                                            const TokenizerInfo* info = nullptr);
  static Tokenizer from_sentencepiece(const std::string& path, const TokenizerInfo* info = nullptr);
  static Tokenizer from_vocab_merges(const std::string& vocab_json_path, const std::string& merges_txt_path,
                                     const std::string& added_tokens_json_path = "",
                                     const std::string& tokenizer_config_json_path = "",
                                     const TokenizerInfo* info = nullptr);

  // Token ids of UTF-8 text. Bytes that are not UTF-8 are read as U+FFFD, as MLC does.
  std::vector<int32_t> encode(const std::string& text) const;
  // The text of the ids (special tokens included). Bytes that do not form UTF-8 come out as
  // U+FFFD, so the result is always valid UTF-8. An id outside the vocabulary is an
  // out-of-range error naming it.
  std::string decode(const std::vector<int32_t>& ids) const;

  // One more than the largest id of the vocabulary and the added tokens.
  size_t vocab_size() const;
  // The token's own text in the vocabulary ("Ġworld", "▁the", "<0x0A>", "<|endoftext|>");
  // nullopt for an id that names no token.
  std::optional<std::string> id_to_token(int32_t id) const;
  std::optional<int32_t> token_to_id(const std::string& token) const;
  // The bytes a token stands for, per tokenizer_info's token_postproc_method ("Ġworld" ->
  // " world"); for stop strings and logprobs. "" for an id that names no token.
  std::string token_bytes(int32_t id) const;
  const std::vector<AddedToken>& added_tokens() const;
  bool is_special(int32_t id) const;
  const TokenizerInfo& info() const;
  // Which file it was made from: "tokenizer.json", "tokenizer.model" or "vocab.json".
  const std::string& kind() const;

  // Made by the functions above.
  explicit Tokenizer(std::shared_ptr<const detail::TokenizerModel> model);

 private:
  std::shared_ptr<const detail::TokenizerModel> model_;
};

// Decodes ids one at a time into text that only ever grows by whole UTF-8 characters (MLC's
// streamer): a token that ends inside a character, or whose text a later token changes, is
// held until the text settles (at most 3 tokens; a character has at most 4 bytes). The pieces
// push and finish return add up to decode(all ids).
class StreamDecoder {
 public:
  explicit StreamDecoder(Tokenizer tokenizer);
  // The text that `id` completes ("" while held).
  std::string push(int32_t id);
  // What is still held, incomplete characters as U+FFFD; the decoder is then empty again.
  std::string finish();

 private:
  Tokenizer tokenizer_;
  std::vector<int32_t> prefix_;   // the tokens last emitted: the context of the next ones
  std::vector<int32_t> pending_;  // tokens not emitted yet
};

}  // namespace graphrt
#pragma GCC visibility pop
