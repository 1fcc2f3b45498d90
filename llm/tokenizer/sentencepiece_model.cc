// SentencePiece's tokenizer.model behind graphrt::Tokenizer: encoding and decoding are
// SentencePiece's own (its normalizer, BPE or unigram model, byte fallback).
#include "llm/tokenizer/sentencepiece_model.h"

#include <unordered_map>

#include "llm/tokenizer/sentencepiece_library.h"

namespace graphrt::llm {
namespace {

class SentencePieceModel : public detail::TokenizerModel {
 public:
  SentencePieceModel(const std::string& model_bytes, const std::string& origin) : processor_(model_bytes, origin) {
    const int n = processor_.piece_count();
    pieces_.reserve(n);
    for (int id = 0; id < n; ++id) {
      pieces_.push_back(processor_.piece(id));
      ids_.emplace(pieces_.back(), id);
    }
  }

  std::vector<int32_t> encode(std::string_view text) const override {
    const std::vector<int> ids = processor_.encode(text);
    return std::vector<int32_t>(ids.begin(), ids.end());
  }
  std::string decode(const std::vector<int32_t>& ids) const override {
    return processor_.decode(std::vector<int>(ids.begin(), ids.end()));
  }
  size_t vocab_size() const override { return pieces_.size(); }
  const std::string* token_of(int32_t id) const override {
    return id >= 0 && static_cast<size_t>(id) < pieces_.size() ? &pieces_[id] : nullptr;
  }
  std::optional<int32_t> id_of(std::string_view token) const override {
    const auto it = ids_.find(std::string(token));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  bool special_piece(int32_t id) const override { return processor_.is_control(id); }

 private:
  SentencePieceProcessor processor_;
  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace

std::shared_ptr<detail::TokenizerModel> read_sentencepiece_model(const std::string& model_bytes,
                                                                 const std::string& origin) {
  auto model = std::make_shared<SentencePieceModel>(model_bytes, origin);
  model->kind = "tokenizer.model";
  return model;
}

}  // namespace graphrt::llm
