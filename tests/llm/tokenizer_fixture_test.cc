// GPT-2's byte-level BPE against the MLC fixture: its 14 tokenizer cases (ids from the npm
// package gpt-3-encoder, GPT-2's reference encoder), the greedy completions' and the chat's
// texts (TVM's run), through tokenizer.json and through vocab.json + merges.txt.
#include <gtest/gtest.h>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "tokenizer_test_support.h"

namespace {

using graphrt::Tokenizer;

void expect_cases(const Tokenizer& tok) {
  const nlohmann::json cases = graphrt_test::mlc_gpt2_case()["tokenizer_cases"];
  ASSERT_EQ(cases.size(), 14u);
  for (const auto& c : cases) {
    const std::string text = c["text"];
    const std::vector<int32_t> expected = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(tok.encode(text), expected) << "text: " << text;
    EXPECT_EQ(tok.decode(expected), c["decoded"].get<std::string>()) << "text: " << text;
  }
}

TEST(TokenizerFixture, CasesThroughTokenizerJson) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Tokenizer tok = Tokenizer::from_tokenizer_json(graphrt_test::mlc_gpt2_folder() + "/tokenizer.json");
  EXPECT_EQ(tok.kind(), "tokenizer.json");
  expect_cases(tok);
}

TEST(TokenizerFixture, CasesThroughVocabAndMerges) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string dir = graphrt_test::mlc_gpt2_folder();
  const Tokenizer tok = Tokenizer::from_vocab_merges(dir + "/vocab.json", dir + "/merges.txt", "",
                                                     dir + "/tokenizer_config.json");
  EXPECT_EQ(tok.kind(), "vocab.json");
  expect_cases(tok);
}

TEST(TokenizerFixture, FolderProbeFindsTokenizerJsonAndDetectsByteLevel) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Tokenizer tok = Tokenizer::from_folder(graphrt_test::mlc_gpt2_folder());
  EXPECT_EQ(tok.kind(), "tokenizer.json");
  EXPECT_EQ(tok.vocab_size(), 50257u);
  EXPECT_EQ(tok.info().token_postproc_method, graphrt::TokenizerInfo::TokenPostproc::kByteLevel);
  EXPECT_FALSE(tok.info().prepend_space_in_encode);
  EXPECT_EQ(tok.id_to_token(995), std::optional<std::string>("\xC4\xA0world"));  // "Ġworld"
  EXPECT_EQ(tok.token_bytes(995), " world");
  EXPECT_EQ(tok.token_bytes(198), "\n");
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), std::optional<int32_t>(50256));
  EXPECT_TRUE(tok.is_special(50256));
  EXPECT_FALSE(tok.is_special(995));
  ASSERT_EQ(tok.added_tokens().size(), 1u);
  EXPECT_EQ(tok.added_tokens()[0].content, "<|endoftext|>");
  EXPECT_FALSE(tok.id_to_token(50257).has_value());
  EXPECT_EQ(tok.token_to_id("no such token"), std::nullopt);
}

TEST(TokenizerFixture, FolderProbeFallsBackToVocabAndMerges) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt_test::ScratchDir dir("tok_vocab_merges");
  const std::string src = graphrt_test::mlc_gpt2_folder();
  for (const char* name : {"vocab.json", "merges.txt", "tokenizer_config.json"}) {
    std::ifstream in(src + "/" + name, std::ios::binary);
    std::ofstream out(dir.path() + "/" + name, std::ios::binary);
    out << in.rdbuf();
  }
  const Tokenizer tok = Tokenizer::from_folder(dir.path());
  EXPECT_EQ(tok.kind(), "vocab.json");
  EXPECT_EQ(tok.encode("<|endoftext|> is special"), (std::vector<int32_t>{50256, 318, 2041}));
  EXPECT_EQ(tok.info().token_postproc_method, graphrt::TokenizerInfo::TokenPostproc::kByteLevel);
}

TEST(TokenizerFixture, GreedyCompletionsAndChatTexts) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Tokenizer tok = Tokenizer::from_folder(graphrt_test::mlc_gpt2_folder());
  const nlohmann::json c = graphrt_test::mlc_gpt2_case();
  for (const auto& g : c["greedy_completions"]) {
    EXPECT_EQ(tok.encode(g["prompt"].get<std::string>()), g["prompt_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(tok.decode(g["output_ids"].get<std::vector<int32_t>>()), g["text_before_stop_str"].get<std::string>());
  }
  const auto& chat = c["chat"];
  EXPECT_EQ(tok.encode(chat["prompt_text"].get<std::string>()), chat["prompt_ids"].get<std::vector<int32_t>>());
  EXPECT_EQ(tok.decode(chat["output_ids"].get<std::vector<int32_t>>()), chat["text_before_stop_str"].get<std::string>());
}

TEST(TokenizerFixture, InvalidUtf8InputReadsAsReplacementCharacter) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Tokenizer tok = Tokenizer::from_folder(graphrt_test::mlc_gpt2_folder());
  // A lone continuation byte and a cut-off 3-byte sequence: each one U+FFFD, as MLC's
  // from_utf8_lossy reads them.
  EXPECT_EQ(tok.encode("a\x80" "b\xE6\x97"), tok.encode("a\xEF\xBF\xBD" "b\xEF\xBF\xBD"));
}

TEST(TokenizerFixture, DecodingStrayBytesGivesValidUtf8) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Tokenizer tok = Tokenizer::from_folder(graphrt_test::mlc_gpt2_folder());
  // Byte F0 (a 4-byte sequence's lead) is the token "\u00F0" in GPT-2's table; alone after
  // "a" it decodes to "a" + U+FFFD.
  const auto lead = tok.token_to_id("\xC3\xB0");
  const auto a = tok.token_to_id("a");
  ASSERT_TRUE(lead && a);
  EXPECT_EQ(tok.decode({*a, *lead}), "a\xEF\xBF\xBD");
  EXPECT_EQ(tok.decode({*lead, *lead}), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(TokenizerFixture, TokenizerInfoFromConfigText) {
  const auto info = graphrt::TokenizerInfo::from_json_text(
      R"({"token_postproc_method": "byte_level", "prepend_space_in_encode": true})", "mlc-chat-config.json");
  EXPECT_EQ(info.token_postproc_method, graphrt::TokenizerInfo::TokenPostproc::kByteLevel);
  EXPECT_TRUE(info.prepend_space_in_encode);
  EXPECT_FALSE(info.strip_space_in_decode);
  const auto defaults = graphrt::TokenizerInfo::from_json_text("{}", "mlc-chat-config.json");
  EXPECT_EQ(defaults.token_postproc_method, graphrt::TokenizerInfo::TokenPostproc::kByteFallback);
  try {
    graphrt::TokenizerInfo::from_json_text(R"({"token_postproc_method": "bytes"})", "mlc-chat-config.json");
    FAIL() << "an unknown method was accepted";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("file"), "mlc-chat-config.json");
    EXPECT_EQ(e.context_value("field"), "tokenizer_info.token_postproc_method");
  }
}

}  // namespace
