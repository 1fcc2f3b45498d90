// A Hugging Face tokenizer pipeline, as tokenizer.json describes one: added tokens cut out of
// the raw text, the normalizer, the pre-tokenizer, the BPE model for each word; for decoding
// the tokens' strings through the decoder. GPT-2's vocab.json + merges.txt make the same
// pipeline (ByteLevel on both sides).
#pragma once

#include <memory>

#include "llm/tokenizer/added_vocabulary.h"
#include "llm/tokenizer/bpe_model.h"
#include "llm/tokenizer/decoder.h"
#include "llm/tokenizer/normalizer.h"
#include "llm/tokenizer/pre_tokenizer.h"
#include "llm/tokenizer/tokenizer_model.h"

namespace graphrt::llm {

class HfPipeline : public detail::TokenizerModel {
 public:
  HfPipeline(std::unique_ptr<BpeModel> model, std::vector<AddedToken> added, std::unique_ptr<Normalizer> normalizer,
             std::unique_ptr<PreTokenizer> pre_tokenizer, std::unique_ptr<Decoder> decoder);

  std::vector<int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  size_t vocab_size() const override { return vocab_size_; }
  const std::string* token_of(int32_t id) const override;
  std::optional<int32_t> id_of(std::string_view token) const override;

 private:
  void encode_normalized(const std::string& text, bool at_text_start, std::vector<int32_t>& ids) const;

  std::unique_ptr<BpeModel> model_;
  AddedVocabulary added_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Decoder> decoder_;
  bool byte_level_words_ = false;
  size_t vocab_size_ = 0;
  std::vector<int> added_index_of_id_;  // index into added_.tokens() per id, or -1
};

// tokenizer.json's text read into its pipeline (`origin` names it in errors).
std::shared_ptr<HfPipeline> read_tokenizer_json(std::string_view text, const std::string& origin);
// The same from the document's root (the caller reads the document once for this and
// detect_tokenizer_info).
std::shared_ptr<HfPipeline> read_tokenizer_json(const JsonAt& root);
// What MLC's runtime detects from a tokenizer.json when the model's config has no tokenizer_info.
TokenizerInfo detect_tokenizer_info(const JsonAt& root);

}  // namespace graphrt::llm
