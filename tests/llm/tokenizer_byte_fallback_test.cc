// Byte-fallback BPE as Llama-2 and Mistral ship it, in a tokenizer.json written here by hand:
// the ids below are worked out by hand from its merges (lowest rank first, leftmost on ties).
//
// Vocabulary: <unk> 0, <s> 1, </s> 2, <0x00>..<0xFF> 3..258 (byte b is 3 + b), then the pieces
// below from 259; merges in rank order:
//   ▁ h -> ▁h, e l -> el, ▁h el -> ▁hel, l o -> lo, ▁hel lo -> ▁hello,
//   ▁ w -> ▁w, o r -> or, ▁w or -> ▁wor, l d -> ld, ▁wor ld -> ▁world
#include <gtest/gtest.h>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "tokenizer_test_support.h"

namespace {

using graphrt::Tokenizer;

const char* const kPieces[] = {"\xE2\x96\x81", "h", "e", "l", "o", "w", "r", "d", "!",
                               "\xE2\x96\x81h", "el", "\xE2\x96\x81hel", "lo", "\xE2\x96\x81hello",
                               "\xE2\x96\x81w", "or", "\xE2\x96\x81wor", "ld", "\xE2\x96\x81world"};
// Ids of the pieces: 259 + index.
enum : int32_t { kSpace = 259, kH, kE, kL, kO, kW, kR, kD, kBang, kSpaceH, kEl, kSpaceHel, kLo, kSpaceHello,
                 kSpaceW, kOr, kSpaceWor, kLd, kSpaceWorld };
constexpr int32_t byte_id(unsigned b) { return 3 + static_cast<int32_t>(b); }

nlohmann::json vocab_json() {
  nlohmann::json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (unsigned b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab[name] = byte_id(b);
  }
  int32_t id = 259;
  for (const char* p : kPieces) vocab[p] = id++;
  return vocab;
}

nlohmann::json merges_json() {
  return {"\xE2\x96\x81 h", "e l", "\xE2\x96\x81h el", "l o", "\xE2\x96\x81hel lo",
          "\xE2\x96\x81 w", "o r", "\xE2\x96\x81w or", "l d", "\xE2\x96\x81wor ld"};
}

nlohmann::json added_tokens_json() {
  return nlohmann::json::array({
      {{"id", 0}, {"content", "<unk>"}, {"special", true}, {"normalized", false}},
      {{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
      {{"id", 2}, {"content", "</s>"}, {"special", true}, {"normalized", false}},
  });
}

nlohmann::json bpe_model(bool byte_fallback) {
  return {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", "<unk>"}, {"fuse_unk", true},
          {"byte_fallback", byte_fallback}, {"vocab", vocab_json()}, {"merges", merges_json()}};
}

// Llama-2 as the legacy converter writes it: a normalizer puts "▁" in front and for spaces,
// no pre-tokenizer (the whole text one word).
std::string legacy_llama_json(bool byte_fallback = true) {
  const nlohmann::json j = {
      {"version", "1.0"},
      {"added_tokens", added_tokens_json()},
      {"normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                                                              {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}}}}},
      {"pre_tokenizer", nullptr},
      {"decoder", {{"type", "Sequence"}, {"decoders", {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
                                                        {{"type", "ByteFallback"}},
                                                        {{"type", "Fuse"}},
                                                        {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model", bpe_model(byte_fallback)}};
  return j.dump();
}

// The same as converted with legacy=False: a Metaspace pre-tokenizer and decoder.
std::string metaspace_llama_json(const char* prepend_scheme) {
  const nlohmann::json j = {
      {"version", "1.0"},
      {"added_tokens", added_tokens_json()},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", prepend_scheme}, {"split", false}}},
      {"decoder", {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", prepend_scheme}, {"split", false}}},
      {"model", bpe_model(true)}};
  return j.dump();
}

using Ids = std::vector<int32_t>;

TEST(TokenizerByteFallback, LegacyNormalizerMergesWords) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(legacy_llama_json(), "llama2.json");
  EXPECT_EQ(tok.encode("hello world"), (Ids{kSpaceHello, kSpaceWorld}));
  EXPECT_EQ(tok.decode({kSpaceHello, kSpaceWorld}), "hello world");
  // "▁h" then "ello": e l -> el (rank 1), then l o? no: "el l o" -> "el lo" (rank 3); no merge of el lo.
  EXPECT_EQ(tok.encode("h ello"), (Ids{kSpaceH, kSpace, kEl, kLo}));
  EXPECT_EQ(tok.vocab_size(), 278u);
  // MLC's detection: a ByteFallback decoder, the Prepend("▁") normalizer, Strip(" ", 1, 0).
  EXPECT_EQ(tok.info().token_postproc_method, graphrt::TokenizerInfo::TokenPostproc::kByteFallback);
  EXPECT_TRUE(tok.info().prepend_space_in_encode);
  EXPECT_TRUE(tok.info().strip_space_in_decode);
  EXPECT_EQ(tok.token_bytes(kSpaceHello), " hello");
  EXPECT_EQ(tok.token_bytes(byte_id(0x0A)), "\n");
}

TEST(TokenizerByteFallback, CharacterOutsideTheVocabularyBecomesItsBytes) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(legacy_llama_json(), "llama2.json");
  // "é" is C3 A9: two byte tokens; "!" is a piece.
  const Ids ids = {kSpaceH, byte_id(0xC3), byte_id(0xA9), kBang};
  EXPECT_EQ(tok.encode("h\xC3\xA9!"), ids);
  EXPECT_EQ(tok.decode(ids), "h\xC3\xA9!");
  // An emoji is four byte tokens; cut after three, ByteFallback gives one U+FFFD per byte token.
  EXPECT_EQ(tok.encode("\xF0\x9F\x98\x80"), (Ids{kSpace, byte_id(0xF0), byte_id(0x9F), byte_id(0x98), byte_id(0x80)}));
  EXPECT_EQ(tok.decode({byte_id(0xF0), byte_id(0x9F), byte_id(0x98)}), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(TokenizerByteFallback, WithoutByteFallbackUnknownCharactersFuseIntoOneUnk) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(legacy_llama_json(false), "llama2.json");
  EXPECT_EQ(tok.encode("h\xC3\xA9\xC3\xA9!"), (Ids{kSpaceH, 0, kBang}));
}

TEST(TokenizerByteFallback, SpecialTokensInTextAndPrependPerSegment) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(legacy_llama_json(), "llama2.json");
  // The normalizer runs on each stretch between added tokens: "hello" gets its "▁".
  EXPECT_EQ(tok.encode("<s>hello</s>"), (Ids{1, kSpaceHello, 2}));
  EXPECT_TRUE(tok.is_special(1));
  // Decoding keeps the special tokens, and Strip drops a leading space of the whole text only.
  EXPECT_EQ(tok.decode({1, kSpaceHello, 2}), "<s> hello</s>");
}

TEST(TokenizerByteFallback, MetaspacePrependFirstOnlyAtTheStart) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(metaspace_llama_json("first"), "llama2_metaspace.json");
  EXPECT_EQ(tok.encode("hello world"), (Ids{kSpaceHello, kSpaceWorld}));
  EXPECT_EQ(tok.decode({kSpaceHello, kSpaceWorld}), "hello world");
  // After <s> the stretch does not start the text: no "▁" is put in front of it.
  EXPECT_EQ(tok.encode("<s>hello"), (Ids{1, kH, kEl, kLo}));
  EXPECT_FALSE(tok.info().prepend_space_in_encode);
}

TEST(TokenizerByteFallback, MetaspacePrependAlwaysAfterSpecialTokensToo) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(metaspace_llama_json("always"), "llama2_metaspace.json");
  EXPECT_EQ(tok.encode("<s>hello"), (Ids{1, kSpaceHello}));
}

TEST(TokenizerByteFallback, StreamingKeepsTheSpacesAWholeDecodeKeeps) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(legacy_llama_json(), "llama2.json");
  graphrt::StreamDecoder stream(tok);
  // Strip drops the first token's leading space only: streamed, " world" keeps its space.
  EXPECT_EQ(stream.push(kSpaceHello), "hello");
  EXPECT_EQ(stream.push(kSpaceWorld), " world");
  // é as two byte tokens: nothing until both are in.
  EXPECT_EQ(stream.push(byte_id(0xC3)), "");
  EXPECT_EQ(stream.push(byte_id(0xA9)), "\xC3\xA9");
  EXPECT_EQ(stream.finish(), "");
}

}  // namespace
