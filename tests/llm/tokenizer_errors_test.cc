// Malformed tokenizer files are refused with a graphrt::Error naming the file and the field
// or line at fault; untrusted strings in the message are quoted and cut.
#include <gtest/gtest.h>

#include <optional>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "scratch_dir.h"
#include "tokenizer_test_support.h"

namespace {

using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::Tokenizer;

const char* const kMinimal = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})";

Error json_error(const std::string& text) {
  try {
    Tokenizer::from_tokenizer_json_text(text, "bad/tokenizer.json");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << text;
  return Error("accepted");
}

TEST(TokenizerErrors, MinimalFileIsAccepted) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(kMinimal, "ok/tokenizer.json");
  // No pre-tokenizer, no decoder: one word, and tokens joined by spaces (Hugging Face's rule).
  EXPECT_EQ(tok.encode("abab"), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(tok.decode({2, 0}), "ab a");
}

TEST(TokenizerErrors, MalformedJsonNamesTheFileAndTheByte) {
  const Error e = json_error("{\"model\": ");
  EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  EXPECT_EQ(e.context_value("file"), "bad/tokenizer.json");
  EXPECT_EQ(e.context_value("offset"), "10") << e.what();
  EXPECT_NE(std::string(e.what()).find("bad/tokenizer.json is not valid JSON"), std::string::npos) << e.what();
}

TEST(TokenizerErrors, MalformedTextIsRefusedBeforeAnyField) {
  // The model is wrong, and so is the text after it: the text is the fault reported.
  const Error e = json_error(R"({"model": {"type": "WordPiece"}, "decoder": [1, 2,]})");
  EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  EXPECT_FALSE(e.context_value("offset").empty()) << e.what();
}

TEST(TokenizerErrors, DeepNestingIsRefused) {
  const Error e = json_error(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_NE(std::string(e.what()).find("nested more than 64 deep"), std::string::npos) << e.what();
  EXPECT_EQ(e.context_value("offset"), "64") << e.what();
}

TEST(TokenizerErrors, MembersMayComeInAnyOrder) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(
      R"({"model": {"merges": ["a b"], "vocab": {"a": 0, "b": 1, "ab": 2}, "type": "BPE"}, "decoder": null})",
      "ok/tokenizer.json");
  EXPECT_EQ(tok.encode("abab"), (std::vector<int32_t>{2, 2}));
}

TEST(TokenizerErrors, ARepeatedMemberNameTakesTheLastValue) {
  // As Hugging Face's reader (serde_json's map visitors) does.
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(
      R"({"model": {"vocab": {"x": 0}, "merges": []},
          "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 7, "ab": 2}, "merges": ["a b"]}})",
      "ok/tokenizer.json");
  EXPECT_EQ(tok.encode("abab"), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(tok.token_to_id("ab"), std::optional<int32_t>(2));
  EXPECT_EQ(tok.token_to_id("x"), std::nullopt);
}

TEST(TokenizerErrors, AHostileVocabularyTokenIsCutInTheField) {
  const std::string token(5000, 'x');
  const Error e =
      json_error(R"({"model": {"type": "BPE", "vocab": {")" + token + R"(\u0001": "zero"}, "merges": []}})");
  EXPECT_LT(e.context_value("field").size(), 100u) << e.context_value("field");
  EXPECT_EQ(e.context_value("field").rfind("model.vocab.'xxx", 0), 0u) << e.context_value("field");
  EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
}

TEST(TokenizerErrors, MissingModelNamesTheField) {
  const Error e = json_error(R"({"version": "1.0"})");
  EXPECT_EQ(e.context_value("field"), "model");
}

TEST(TokenizerErrors, MergeOutsideTheVocabularyNamesTheMerge) {
  const Error e = json_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b", "a c"]}})");
  EXPECT_EQ(e.context_value("field"), "model.merges[1]");
  EXPECT_NE(std::string(e.what()).find("'c'"), std::string::npos) << e.what();
}

TEST(TokenizerErrors, MergeWithoutOneSpaceIsRefused) {
  const Error e = json_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b c"]}})");
  EXPECT_EQ(e.context_value("field"), "model.merges[0]");
}

TEST(TokenizerErrors, WrongTypesNameTheField) {
  EXPECT_EQ(json_error(R"({"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []}})").context_value("field"),
            "model.vocab.a");
  EXPECT_EQ(json_error(R"({"model": {"type": "BPE", "vocab": {"a": -4}, "merges": []}})").context_value("field"),
            "model.vocab.a");
  EXPECT_EQ(json_error(R"({"added_tokens": [{"id": 5}], "model": {"type": "BPE", "vocab": {}, "merges": []}})")
                .context_value("field"),
            "added_tokens[0].content");
}

TEST(TokenizerErrors, UnsupportedPartsAreUnsupported) {
  const Error model = json_error(R"({"model": {"type": "WordPiece", "vocab": {}}})");
  EXPECT_EQ(model.kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(model.context_value("field"), "model.type");
  const Error pre = json_error(
      R"({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "BertPreTokenizer"}]}, "model": {"vocab": {}, "merges": []}})");
  EXPECT_EQ(pre.kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(pre.context_value("field"), "pre_tokenizer.pretokenizers[0].type");
}

TEST(TokenizerErrors, BadRegexNamesThePattern) {
  const Error e = json_error(
      R"({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated"}, "model": {"vocab": {}, "merges": []}})");
  EXPECT_EQ(e.context_value("field"), "pre_tokenizer.pattern.Regex");
  EXPECT_EQ(e.context_value("file"), "bad/tokenizer.json");
}

TEST(TokenizerErrors, LongUntrustedStringsAreCut) {
  const std::string long_type(5000, 'X');
  const Error e = json_error(R"({"decoder": {"type": ")" + long_type + R"("}, "model": {"vocab": {}, "merges": []}})");
  EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
}

TEST(TokenizerErrors, MergesTxtNamesTheLine) {
  graphrt_test::ScratchDir dir("tok_bad_merges");
  graphrt_test::write_text_file(dir.path() + "/vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
  graphrt_test::write_text_file(dir.path() + "/merges.txt", "#version: 0.2\na b\nab\n");
  try {
    Tokenizer::from_folder(dir.path());
    FAIL() << "a merges line without a space was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("file"), dir.path() + "/merges.txt");
    EXPECT_EQ(e.context_value("line"), "3");
  }
  graphrt_test::write_text_file(dir.path() + "/merges.txt", "a b\nb a\n");
  try {
    Tokenizer::from_folder(dir.path());
    FAIL() << "a merge making a token outside the vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("field"), "merges[1]");
  }
}

TEST(TokenizerErrors, FolderWithoutTokenizerIsNotFound) {
  graphrt_test::ScratchDir dir("tok_empty");
  try {
    Tokenizer::from_folder(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_EQ(e.context_value("file"), dir.path());
  }
  try {
    Tokenizer::from_folder(dir.path() + "/missing");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
}

TEST(TokenizerErrors, DecodingAnIdOutsideTheVocabularyIsOutOfRange) {
  const Tokenizer tok = Tokenizer::from_tokenizer_json_text(kMinimal, "ok/tokenizer.json");
  try {
    tok.decode({0, 3});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
    EXPECT_EQ(e.context_value("token"), "3");
  }
  EXPECT_THROW(tok.decode({-1}), Error);
}

}  // namespace
