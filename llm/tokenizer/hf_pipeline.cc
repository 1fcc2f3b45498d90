#include "llm/tokenizer/hf_pipeline.h"

namespace graphrt::llm {

HfPipeline::HfPipeline(std::unique_ptr<BpeModel> model, std::vector<AddedToken> added,
                       std::unique_ptr<Normalizer> normalizer, std::unique_ptr<PreTokenizer> pre_tokenizer,
                       std::unique_ptr<Decoder> decoder)
    : model_(std::move(model)),
      added_(added),
      normalizer_(std::move(normalizer)),
      pre_tokenizer_(std::move(pre_tokenizer)),
      decoder_(std::move(decoder)) {
  byte_level_words_ = pre_tokenizer_ && pre_tokenizer_->byte_level();
  vocab_size_ = model_->id_bound();
  for (const AddedToken& t : added) vocab_size_ = std::max(vocab_size_, static_cast<size_t>(t.id) + 1);
  added_index_of_id_.assign(vocab_size_, -1);
  for (size_t i = 0; i < added.size(); ++i) added_index_of_id_[added[i].id] = static_cast<int>(i);
  added_tokens = std::move(added);
}

void HfPipeline::encode_normalized(const std::string& text, bool at_text_start, std::vector<int32_t>& ids) const {
  for (const auto& segment : added_.split(text, true)) {
    if (segment.id >= 0) {
      ids.push_back(segment.id);
      continue;
    }
    std::vector<Piece> pieces{{text.substr(segment.begin, segment.end - segment.begin), at_text_start && segment.begin == 0}};
    if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(pieces);
    for (const Piece& piece : pieces) model_->encode_word(piece.text, byte_level_words_, ids);
  }
}

std::vector<int32_t> HfPipeline::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3);
  for (const auto& segment : added_.split(text, false)) {
    if (segment.id >= 0) {
      ids.push_back(segment.id);
      continue;
    }
    std::string part(text.substr(segment.begin, segment.end - segment.begin));
    if (normalizer_) normalizer_->normalize(part);
    encode_normalized(part, segment.begin == 0, ids);
  }
  return ids;
}

std::string HfPipeline::decode(const std::vector<int32_t>& ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string* token = token_of(id);
    if (token) tokens.push_back(*token);
  }
  if (!decoder_) {
    std::string joined;
    for (size_t i = 0; i < tokens.size(); ++i) joined += (i ? " " : "") + tokens[i];
    return joined;
  }
  decoder_->decode_chain(tokens);
  std::string text;
  for (const std::string& t : tokens) text += t;
  return text;
}

const std::string* HfPipeline::token_of(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= vocab_size_) return nullptr;
  const int added = added_index_of_id_[id];
  if (added >= 0) return &added_tokens[added].content;
  return model_->token_of(id);
}

std::optional<int32_t> HfPipeline::id_of(std::string_view token) const {
  for (const AddedToken& t : added_tokens) {
    if (t.content == token) return t.id;
  }
  return model_->id_of(token);
}

}  // namespace graphrt::llm
