// tokenizer.json (Hugging Face's serialization of a Tokenizer): its BPE model, added tokens,
// normalizer, pre-tokenizer and decoder. post_processor, truncation and padding are read by
// nobody here: MLC encodes without special tokens and never pads.
#include "graphrt/error.h"
#include "llm/tokenizer/hf_pipeline.h"
#include "llm/tokenizer/json_fields.h"

namespace graphrt::llm {
namespace {

[[noreturn]] void unsupported(const JsonAt& at, const std::string& what) {
  throw Error(ErrorKind::kUnsupported, at.origin + ": '" + at.path + "' " + what + ", which graphrt does not implement")
      .with("file", at.origin)
      .with("field", at.path);
}

// The merges, each "a b" or ["a", "b"], read in one pass.
std::vector<std::pair<std::string, std::string>> read_merges(const JsonAt& merges) {
  merges.array();
  std::vector<std::pair<std::string, std::string>> out;
  JsonReader r = merges.reader();
  r.array([&](size_t i) {
    (void)r.peek();
    const size_t at = r.offset();
    if (r.next_is_string()) {
      const std::string line = r.read_string();
      const size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
        merges.at_offset(at, merges.path + "[" + std::to_string(i) + "]")
            .fail("is " + quote_cut(line) + ", not two tokens separated by one space");
      }
      out.emplace_back(line.substr(0, space), line.substr(space + 1));
      return;
    }
    if (r.next_is_array()) {  // newer files: ["a", "b"]
      std::string pair[2];
      size_t strings = 0;
      bool well_formed = true;
      r.array([&](size_t k) {
        if (k < 2 && r.next_is_string()) {
          pair[k] = r.read_string();
          ++strings;
        } else {
          well_formed = false;
          r.skip_value();
        }
      });
      if (well_formed && strings == 2) {
        out.emplace_back(std::move(pair[0]), std::move(pair[1]));
        return;
      }
    }
    // Refused: the error names what the merge is instead.
    const JsonAt merge = merges.at_offset(at, merges.path + "[" + std::to_string(i) + "]");
    if (!merge.is_array()) (void)merge.string();
    if (merge.size() != 2) merge.fail("is not a pair of tokens");
    (void)merge.element(0).string();
    (void)merge.element(1).string();
    merge.fail("is not a pair of tokens");
  });
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
  return std::make_unique<BpeModel>(read_token_ids(model.member("vocab")), merges, options, model.origin,
                                    model.path + ".merges");
}

std::vector<AddedToken> read_added_tokens(const JsonAt& root) {
  std::vector<AddedToken> out;
  if (!root.has_non_null("added_tokens")) return out;
  const JsonAt list = root.member("added_tokens");
  for (size_t i = 0; i < list.size(); ++i) {
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
  const JsonDoc doc(text, origin, kTokenizerJsonLimits);
  return read_tokenizer_json(doc.root());
}

std::shared_ptr<HfPipeline> read_tokenizer_json(const JsonAt& root) {
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
