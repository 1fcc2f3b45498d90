// tokenizer.json (Hugging Face's serialization of a Tokenizer): its BPE model, added tokens,
// normalizer, pre-tokenizer and decoder. post_processor, truncation and padding are read by
// nobody here: MLC encodes without special tokens and never pads.
#include "graphrt/error.h"
#include "llm/tokenizer/hf_pipeline.h"
#include "llm/tokenizer/json_fields.h"

namespace graphrt::llm {
namespace {

constexpr int64_t kMaxTokenId = (int64_t(1) << 31) - 1;

[[noreturn]] void unsupported(const JsonAt& at, const std::string& what) {
  throw Error(ErrorKind::kUnsupported, at.origin + ": '" + at.path + "' " + what + ", which graphrt does not implement")
      .with("file", at.origin)
      .with("field", at.path);
}

std::unordered_map<std::string, int32_t> read_vocab(const JsonAt& vocab) {
  std::unordered_map<std::string, int32_t> out;
  out.reserve(vocab.object().size());
  for (auto it = vocab.value.begin(); it != vocab.value.end(); ++it) {
    const JsonAt id{it.value(), vocab.origin, vocab.path + "." + it.key()};
    out.emplace(it.key(), static_cast<int32_t>(id.integer(0, kMaxTokenId)));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> read_merges(const JsonAt& merges) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.array().size());
  for (size_t i = 0; i < merges.value.size(); ++i) {
    const JsonAt merge = merges.element(i);
    if (merge.value.is_array()) {
      if (merge.value.size() != 2) merge.fail("is not a pair of tokens");
      out.emplace_back(merge.element(0).string(), merge.element(1).string());
      continue;
    }
    const std::string line = merge.string();
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      merge.fail("is " + quote_cut(line) + ", not two tokens separated by one space");
    }
    out.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return out;
}

std::unique_ptr<BpeModel> read_bpe(const JsonAt& model) {
  const std::string type = model.string_or("type", "BPE");
  if (type != "BPE") unsupported(model.member("type"), "is model type " + quote_cut(type));
  if (model.has_non_null("dropout") && model.member("dropout").number() > 0) {
    unsupported(model.member("dropout"), "asks for BPE dropout");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (!model.string_or(key, "").empty()) unsupported(model.member(key), "is not empty");
  }
  BpeOptions options;
  if (model.has_non_null("unk_token")) options.unk_token = model.member("unk_token").string();
  options.fuse_unk = model.bool_or("fuse_unk", false);
  options.byte_fallback = model.bool_or("byte_fallback", false);
  options.ignore_merges = model.bool_or("ignore_merges", false);
  std::vector<std::pair<std::string, std::string>> merges;
  if (model.has_non_null("merges")) merges = read_merges(model.member("merges"));
  return std::make_unique<BpeModel>(read_vocab(model.member("vocab")), merges, options, model.origin,
                                    model.path + ".merges");
}

std::vector<AddedToken> read_added_tokens(const JsonAt& root) {
  std::vector<AddedToken> out;
  if (!root.has_non_null("added_tokens")) return out;
  const JsonAt list = root.member("added_tokens");
  for (size_t i = 0; i < list.array().size(); ++i) {
    const JsonAt entry = list.element(i);
    AddedToken t;
    t.id = static_cast<int32_t>(entry.member("id").integer(0, kMaxTokenId));
    t.content = entry.member("content").string();
    if (t.content.empty()) entry.member("content").fail("is empty");
    t.special = entry.bool_or("special", false);
    t.single_word = entry.bool_or("single_word", false);
    t.lstrip = entry.bool_or("lstrip", false);
    t.rstrip = entry.bool_or("rstrip", false);
    t.normalized = entry.bool_or("normalized", !t.special);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::shared_ptr<HfPipeline> read_tokenizer_json(std::string_view text, const std::string& origin) {
  const nlohmann::json doc = parse_json(text, origin);
  const JsonAt root{doc, origin, ""};
  root.object();
  auto model = read_bpe(root.member("model"));
  auto pipeline = std::make_shared<HfPipeline>(
      std::move(model), read_added_tokens(root),
      read_normalizer(root.member_or_null("normalizer")), read_pre_tokenizer(root.member_or_null("pre_tokenizer")),
      read_decoder(root.member_or_null("decoder")));
  pipeline->kind = "tokenizer.json";
  return pipeline;
}

}  // namespace graphrt::llm
