// graphrt::Tokenizer: the public face over the formats' readers, and the folder probe.
#include "graphrt/tokenizer.h"

#include <sys/stat.h>

#include "graphrt/error.h"
#include "graphrt/regular_file.h"
#include "llm/tokenizer/hf_pipeline.h"
#include "llm/tokenizer/sentencepiece_model.h"
#include "llm/tokenizer/tokenizer_model.h"
#include "llm/tokenizer/utf8.h"
#include "llm/tokenizer/vocab_merges.h"

namespace graphrt {
namespace {

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string read_tokenizer_file(const std::string& path, const char* what) {
  return read_regular_file(path, what, llm::kMaxTokenizerFileBytes);
}

Tokenizer finish(std::shared_ptr<detail::TokenizerModel> model, const TokenizerInfo* info) {
  if (info) model->info = *info;
  model->complete();
  return Tokenizer(std::move(model));
}

}  // namespace

Tokenizer::Tokenizer(std::shared_ptr<const detail::TokenizerModel> model) : model_(std::move(model)) {}

Tokenizer Tokenizer::from_tokenizer_json_text(const std::string& json_text, const std::string& origin,
                                              const TokenizerInfo* info) {
  // One reading of the text for the pipeline and the detected info.
  const llm::JsonDoc doc(json_text, origin, llm::kTokenizerJsonLimits);
  std::shared_ptr<llm::HfPipeline> pipeline = llm::read_tokenizer_json(doc.root());
  pipeline->info = info ? *info : llm::detect_tokenizer_info(doc.root());
  return finish(std::move(pipeline), nullptr);
}

Tokenizer Tokenizer::from_tokenizer_json(const std::string& path, const TokenizerInfo* info) {
  return from_tokenizer_json_text(read_tokenizer_file(path, "tokenizer.json"), path, info);
}

Tokenizer Tokenizer::from_sentencepiece(const std::string& path, const TokenizerInfo* info) {
  return finish(llm::read_sentencepiece_model(read_tokenizer_file(path, "SentencePiece tokenizer.model"), path), info);
}

Tokenizer Tokenizer::from_vocab_merges(const std::string& vocab_json_path, const std::string& merges_txt_path,
                                       const std::string& added_tokens_json_path,
                                       const std::string& tokenizer_config_json_path, const TokenizerInfo* info) {
  llm::VocabMergesTexts texts;
  texts.vocab_json = read_tokenizer_file(vocab_json_path, "vocab.json");
  texts.vocab_origin = vocab_json_path;
  texts.merges_txt = read_tokenizer_file(merges_txt_path, "merges.txt");
  texts.merges_origin = merges_txt_path;
  if (!added_tokens_json_path.empty()) {
    texts.added_tokens_json = read_tokenizer_file(added_tokens_json_path, "added_tokens.json");
    texts.added_tokens_origin = added_tokens_json_path;
  }
  if (!tokenizer_config_json_path.empty()) {
    texts.tokenizer_config_json = read_tokenizer_file(tokenizer_config_json_path, "tokenizer_config.json");
    texts.tokenizer_config_origin = tokenizer_config_json_path;
  }
  return finish(llm::read_vocab_merges(texts), info);
}

Tokenizer Tokenizer::from_folder(const std::string& folder, const TokenizerInfo* info) {
  if (!is_directory(folder)) {
    throw Error(ErrorKind::kNotFound, "tokenizer folder " + folder + " is not a folder").with("file", folder);
  }
  const std::string dir = folder.back() == '/' ? folder : folder + "/";
  if (is_file(dir + "tokenizer.json")) return from_tokenizer_json(dir + "tokenizer.json", info);
  if (is_file(dir + "tokenizer.model")) return from_sentencepiece(dir + "tokenizer.model", info);
  if (is_file(dir + "vocab.json") && is_file(dir + "merges.txt")) {
    const std::string added = is_file(dir + "added_tokens.json") ? dir + "added_tokens.json" : "";
    const std::string config = is_file(dir + "tokenizer_config.json") ? dir + "tokenizer_config.json" : "";
    return from_vocab_merges(dir + "vocab.json", dir + "merges.txt", added, config, info);
  }
  throw Error(ErrorKind::kNotFound, folder + " has no tokenizer: none of tokenizer.json, tokenizer.model, "
                                             "vocab.json + merges.txt")
      .with("file", folder);
}

std::vector<int32_t> Tokenizer::encode(const std::string& text) const {
  if (llm::is_valid_utf8(text)) return model_->encode(text);
  return model_->encode(llm::utf8_lossy(text));
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  const size_t n = model_->vocab_size();
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= n) {
      throw Error(ErrorKind::kOutOfRange, "token id " + std::to_string(id) + " is outside the vocabulary of " +
                                              std::to_string(n) + " tokens")
          .with("token", std::to_string(id));
    }
  }
  std::string text = model_->decode(ids);
  return llm::is_valid_utf8(text) ? text : llm::utf8_lossy(text);
}

size_t Tokenizer::vocab_size() const { return model_->vocab_size(); }

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  const std::string* token = model_->token_of(id);
  if (!token) return std::nullopt;
  return *token;
}

std::optional<int32_t> Tokenizer::token_to_id(const std::string& token) const { return model_->id_of(token); }

std::string Tokenizer::token_bytes(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= model_->token_bytes.size()) return "";
  return model_->token_bytes[id];
}

const std::vector<AddedToken>& Tokenizer::added_tokens() const { return model_->added_tokens; }

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < model_->special.size() && model_->special[id];
}

const TokenizerInfo& Tokenizer::info() const { return model_->info; }
const std::string& Tokenizer::kind() const { return model_->kind; }

}  // namespace graphrt
