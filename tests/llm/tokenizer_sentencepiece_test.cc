// SentencePiece's tokenizer.model, checked against SentencePiece's own processor. Debian ships
// no model file, so the test trains small ones (BPE with byte fallback, as Llama-2's; unigram)
// on the GPL's text with SentencePiece's trainer.
#include <gtest/gtest.h>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "scratch_dir.h"
#include "tokenizer_test_support.h"

namespace {

using graphrt::Tokenizer;

const std::vector<std::string>& probe_texts() {
  static const std::vector<std::string> texts = {
      "This program is free software: you can redistribute it",
      "  leading spaces and   runs\tof whitespace\n\nnew lines",
      "Unicode: na\xC3\xAFve caf\xC3\xA9 \xE2\x80\x94 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
      "emoji \xF0\x9F\x98\x80\xF0\x9F\x9A\x80 end",
      "",
      "GNU GENERAL PUBLIC LICENSE Version 3, 29 June 2007",
  };
  return texts;
}

// Trains a model on the GPL's text into `dir`; returns its path ("" when the text is missing).
std::string train(const std::string& dir, const std::string& type, bool byte_fallback) {
  const std::string corpus = "/usr/share/common-licenses/GPL-3";
  if (!std::ifstream(corpus)) return "";
  const std::string prefix = dir + "/" + type;
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + corpus + " --model_prefix=" + prefix + " --vocab_size=400 --model_type=" + type +
      " --character_coverage=1.0 --byte_fallback=" + (byte_fallback ? "true" : "false") + " --minloglevel=2");
  EXPECT_TRUE(status.ok()) << status.ToString();
  return prefix + ".model";
}

void expect_same_as_sentencepiece(const std::string& model_path) {
  sentencepiece::SentencePieceProcessor reference;
  ASSERT_TRUE(reference.Load(model_path).ok());
  const Tokenizer tok = Tokenizer::from_sentencepiece(model_path);
  EXPECT_EQ(tok.kind(), "tokenizer.model");
  EXPECT_EQ(tok.vocab_size(), static_cast<size_t>(reference.GetPieceSize()));
  for (const std::string& text : probe_texts()) {
    std::vector<int> expected;
    ASSERT_TRUE(reference.Encode(text, &expected).ok());
    const std::vector<int32_t> ids = tok.encode(text);
    EXPECT_EQ(ids, std::vector<int32_t>(expected.begin(), expected.end())) << "text: " << text;
    std::string decoded;
    ASSERT_TRUE(reference.Decode(expected, &decoded).ok());
    EXPECT_EQ(tok.decode(ids), decoded) << "text: " << text;
  }
  for (int id = 0; id < reference.GetPieceSize(); id += 37) {
    EXPECT_EQ(tok.id_to_token(id), std::optional<std::string>(reference.IdToPiece(id)));
    EXPECT_EQ(tok.token_to_id(reference.IdToPiece(id)), std::optional<int32_t>(id));
    EXPECT_EQ(tok.is_special(id), reference.IsControl(id));
  }
}

TEST(TokenizerSentencePiece, BpeWithByteFallbackMatchesSentencePiece) {
  graphrt_test::ScratchDir dir("tok_spm_bpe");
  const std::string model = train(dir.path(), "bpe", true);
  if (model.empty()) GTEST_SKIP() << "no /usr/share/common-licenses/GPL-3 to train on";
  expect_same_as_sentencepiece(model);
  const Tokenizer tok = Tokenizer::from_sentencepiece(model);
  // byte_fallback is tokenizer_info's default: "<0x0A>" is a newline, "▁" a space.
  const auto newline = tok.token_to_id("<0x0A>");
  ASSERT_TRUE(newline.has_value());
  EXPECT_EQ(tok.token_bytes(*newline), "\n");
  EXPECT_EQ(tok.token_bytes(*tok.token_to_id("\xE2\x96\x81")), " ");
}

TEST(TokenizerSentencePiece, UnigramMatchesSentencePiece) {
  graphrt_test::ScratchDir dir("tok_spm_unigram");
  const std::string model = train(dir.path(), "unigram", false);
  if (model.empty()) GTEST_SKIP() << "no /usr/share/common-licenses/GPL-3 to train on";
  expect_same_as_sentencepiece(model);
}

TEST(TokenizerSentencePiece, FolderWithTokenizerModel) {
  graphrt_test::ScratchDir dir("tok_spm_folder");
  const std::string model = train(dir.path(), "bpe", true);
  if (model.empty()) GTEST_SKIP() << "no /usr/share/common-licenses/GPL-3 to train on";
  std::rename(model.c_str(), (dir.path() + "/tokenizer.model").c_str());
  std::remove((dir.path() + "/bpe.vocab").c_str());
  const Tokenizer tok = Tokenizer::from_folder(dir.path());
  EXPECT_EQ(tok.kind(), "tokenizer.model");
  EXPECT_EQ(tok.decode(tok.encode("free software")), "free software");
}

TEST(TokenizerSentencePiece, NotAModelNamesTheFile) {
  graphrt_test::ScratchDir dir("tok_spm_bad");
  const std::string path = dir.path() + "/tokenizer.model";
  graphrt_test::write_text_file(path, "this is not a protobuf");
  try {
    Tokenizer::from_sentencepiece(path);
    FAIL() << "a text file was read as a SentencePiece model";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kInvalidArgument);
    EXPECT_EQ(e.context_value("file"), path);
  }
}

}  // namespace
