// GPT-2's own files: vocab.json ({token: id}), merges.txt (one "a b" merge per line, after an
// optional "#version" line), and beside them added_tokens.json ({token: id}) and
// tokenizer_config.json (its bos/eos/unk/pad tokens and added_tokens_decoder).
//
// MLC's runtime builds this tokenizer with ByteLevel(use_regex = false), the whole text one
// BPE word; graphrt splits with GPT-2's pattern as GPT-2's encoder and Hugging Face's
// ByteLevelBPETokenizer do, so these files give the same ids as the tokenizer.json made from
// them.
#include "llm/tokenizer/vocab_merges.h"

#include "graphrt/error.h"
#include "graphrt/regular_file.h"
#include "llm/tokenizer/hf_pipeline.h"
#include "llm/tokenizer/json_fields.h"

namespace graphrt::llm {
namespace {

// tokenizer_config.json's special tokens: "bos_token" etc. as a string or {"content": ...},
// and added_tokens_decoder {id: {"content", "special", "lstrip", ...}}.
void read_config_tokens(const JsonAt& root, const std::unordered_map<std::string, int32_t>& vocab,
                        std::vector<AddedToken>& added) {
  root.object();
  const auto add = [&](AddedToken t) {
    for (const AddedToken& a : added) {
      if (a.content == t.content) return;
    }
    added.push_back(std::move(t));
  };
  if (root.has_non_null("added_tokens_decoder")) {
    const JsonAt table = root.member("added_tokens_decoder");
    table.each_member([&](const std::string& key, const JsonAt& entry) {
      AddedToken t;
      try {
        const long long id = std::stoll(key);
        if (id < 0 || id > kMaxTokenId) throw std::out_of_range("id");
        t.id = static_cast<int32_t>(id);
      } catch (const std::logic_error&) {
        entry.fail("is keyed by " + quote_cut(key) + ", not a token id");
      }
      t.content = entry.member("content").string();
      if (t.content.empty()) entry.member("content").fail("is empty");
      t.special = entry.bool_or("special", true);
      t.single_word = entry.bool_or("single_word", false);
      t.lstrip = entry.bool_or("lstrip", false);
      t.rstrip = entry.bool_or("rstrip", false);
      t.normalized = entry.bool_or("normalized", !t.special);
      add(std::move(t));
    });
  }
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    if (!root.has_non_null(key)) continue;
    const JsonAt field = root.member(key);
    const std::string content = field.is_object() ? field.member("content").string() : field.string();
    const auto it = vocab.find(content);
    if (it == vocab.end()) continue;  // a special token the vocabulary lacks cannot be encoded
    AddedToken t;
    t.id = it->second;
    t.content = content;
    t.special = true;
    add(std::move(t));
  }
}

std::vector<std::pair<std::string, std::string>> read_merges_txt(const std::string& text, const std::string& origin) {
  std::vector<std::pair<std::string, std::string>> merges;
  size_t line_number = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.compare(0, 8, "#version") == 0) continue;
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      throw Error(origin + ": line " + std::to_string(line_number) + " is " + quote_cut(line) +
                  ", not two tokens separated by one space")
          .with("file", origin)
          .with("line", std::to_string(line_number));
    }
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return merges;
}

}  // namespace

std::shared_ptr<detail::TokenizerModel> read_vocab_merges(const VocabMergesTexts& texts) {
  const JsonDoc vocab_doc(texts.vocab_json, texts.vocab_origin, kTokenizerJsonLimits);
  std::unordered_map<std::string, int32_t> vocab = read_token_ids(vocab_doc.root());
  std::vector<AddedToken> added;
  if (!texts.added_tokens_json.empty()) {
    const JsonDoc added_doc(texts.added_tokens_json, texts.added_tokens_origin, kTokenizerJsonLimits);
    // Kept in a hash map before they are listed, as before the move to the base reader, so that
    // the tokens come in the same order (the file's names, bytewise, into the map).
    std::unordered_map<std::string, int32_t> ids;
    added_doc.root().each_member([&](const std::string& content, const JsonAt& id) {
      ids.emplace(content, static_cast<int32_t>(id.integer(0, kMaxTokenId)));
    });
    for (const auto& [content, id] : ids) {
      AddedToken t;
      t.id = id;
      t.content = content;
      added.push_back(t);
      vocab.emplace(content, id);
    }
  }
  bool add_prefix_space = false;
  if (!texts.tokenizer_config_json.empty()) {
    const JsonDoc config(texts.tokenizer_config_json, texts.tokenizer_config_origin, kTokenizerJsonLimits);
    read_config_tokens(config.root(), vocab, added);
    add_prefix_space = config.root().bool_or("add_prefix_space", false);
  }
  const std::vector<std::pair<std::string, std::string>> merges = read_merges_txt(texts.merges_txt, texts.merges_origin);
  auto model = std::make_unique<BpeModel>(std::move(vocab), merges, BpeOptions{}, texts.merges_origin, "merges");
  auto pipeline = std::make_shared<HfPipeline>(std::move(model), std::move(added), nullptr,
                                               gpt2_byte_level_pre_tokenizer(add_prefix_space), byte_level_decoder());
  pipeline->kind = "vocab.json";
  pipeline->info.token_postproc_method = TokenizerInfo::TokenPostproc::kByteLevel;
  return pipeline;
}

}  // namespace graphrt::llm
