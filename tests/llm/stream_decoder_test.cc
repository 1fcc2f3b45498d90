// Streaming decode never emits part of a UTF-8 character, and its pieces add up to the whole
// decoding: over the fixture's multibyte cases (emoji, ZWJ sequences, CJK, accents) and its
// greedy texts, one token at a time.
#include <gtest/gtest.h>

#include "graphrt/tokenizer.h"
#include "tokenizer_test_support.h"

namespace {

using graphrt::StreamDecoder;
using graphrt::Tokenizer;

void expect_streams_whole_characters(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  StreamDecoder stream(tok);
  std::string text;
  for (int32_t id : ids) {
    const std::string piece = stream.push(id);
    EXPECT_TRUE(graphrt_test::well_formed_utf8(piece)) << "a piece splits a character at id " << id;
    text += piece;
  }
  const std::string rest = stream.finish();
  EXPECT_TRUE(graphrt_test::well_formed_utf8(rest));
  text += rest;
  EXPECT_EQ(text, tok.decode(ids));
}

TEST(StreamDecoder, FixtureCasesStreamWholeCharacters) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Tokenizer tok = Tokenizer::from_folder(graphrt_test::mlc_gpt2_folder());
  const nlohmann::json c = graphrt_test::mlc_gpt2_case();
  for (const auto& t : c["tokenizer_cases"]) expect_streams_whole_characters(tok, t["ids"].get<std::vector<int32_t>>());
  for (const auto& g : c["greedy_completions"]) {
    expect_streams_whole_characters(tok, g["output_ids"].get<std::vector<int32_t>>());
  }
}

TEST(StreamDecoder, EmojiBytesAreHeldUntilComplete) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Tokenizer tok = Tokenizer::from_folder(graphrt_test::mlc_gpt2_folder());
  // 😀 (F0 9F 98 80) as four single-byte tokens of GPT-2's table.
  const std::vector<std::string> byte_chars = {"\xC3\xB0", "\xC5\x81", "\xC4\xBA", "\xC4\xA2"};
  std::vector<int32_t> ids;
  for (const std::string& c : byte_chars) {
    const auto id = tok.token_to_id(c);
    ASSERT_TRUE(id.has_value()) << c;
    ids.push_back(*id);
  }
  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.push(ids[1]), "");
  EXPECT_EQ(stream.push(ids[2]), "");
  EXPECT_EQ(stream.push(ids[3]), "\xF0\x9F\x98\x80");
  EXPECT_EQ(stream.finish(), "");
  // Cut short, finish gives what is held as U+FFFD.
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.push(ids[1]), "");
  EXPECT_EQ(stream.finish(), "\xEF\xBF\xBD");
}

}  // namespace
