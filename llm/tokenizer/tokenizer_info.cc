// mlc-chat-config.json's tokenizer_info, and its detection from a tokenizer.json as MLC's
// runtime does when the config has none.
#include <functional>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "llm/tokenizer/hf_pipeline.h"
#include "llm/tokenizer/json_fields.h"

namespace graphrt {
namespace {

using llm::JsonAt;

// tokenizer_info is a few dozen bytes in a config of kilobytes.
constexpr size_t kMaxTokenizerInfoBytes = size_t(16) << 20;

bool string_member_is(const JsonAt& object, const char* key, const char* expected) {
  if (!object.has(key)) return false;
  const JsonAt member = object.member(key);
  return member.is_string() && member.string() == expected;
}

bool integer_member_is(const JsonAt& object, const char* key, int64_t expected) {
  if (!object.has(key)) return false;
  const JsonAt member = object.member(key);
  return member.is_integer() && member.integer(INT64_MIN, INT64_MAX) == expected;
}

// The decoders of `at` in order, a Sequence's flattened.
void each_decoder(const JsonAt& at, const std::function<void(const JsonAt&)>& visit) {
  if (!at.is_object()) return;
  if (at.string_or("type", "") == "Sequence" && at.has_non_null("decoders") && at.member("decoders").is_array()) {
    const JsonAt list = at.member("decoders");
    for (size_t i = 0; i < list.size(); ++i) each_decoder(list.element(i), visit);
    return;
  }
  visit(at);
}

void each_normalizer(const JsonAt& at, const std::function<void(const JsonAt&)>& visit) {
  if (!at.is_object()) return;
  if (at.string_or("type", "") == "Sequence" && at.has_non_null("normalizers") && at.member("normalizers").is_array()) {
    const JsonAt list = at.member("normalizers");
    for (size_t i = 0; i < list.size(); ++i) each_normalizer(list.element(i), visit);
    return;
  }
  visit(at);
}

}  // namespace

TokenizerInfo TokenizerInfo::from_json_text(const std::string& json_text, const std::string& origin) {
  // An object of three fields, from a model's config (whose reader bounds its size).
  const llm::JsonDoc doc(json_text, origin, JsonLimits{kMaxTokenizerInfoBytes, llm::kMaxJsonDepth});
  const JsonAt root = doc.root("tokenizer_info");
  root.object();
  TokenizerInfo info;
  if (root.has_non_null("token_postproc_method")) {
    const JsonAt field = root.member("token_postproc_method");
    const std::string method = field.string();
    if (method == "byte_level") info.token_postproc_method = TokenPostproc::kByteLevel;
    else if (method == "byte_fallback") info.token_postproc_method = TokenPostproc::kByteFallback;
    else field.fail("is " + llm::quote_cut(method) + ", not byte_level or byte_fallback");
  }
  info.prepend_space_in_encode = root.bool_or("prepend_space_in_encode", false);
  info.strip_space_in_decode = root.bool_or("strip_space_in_decode", false);
  return info;
}

TokenizerInfo TokenizerInfo::detect_from_tokenizer_json(const std::string& json_text, const std::string& origin) {
  const llm::JsonDoc doc(json_text, origin, llm::kTokenizerJsonLimits);
  return llm::detect_tokenizer_info(doc.root());
}

}  // namespace graphrt

namespace graphrt::llm {

TokenizerInfo detect_tokenizer_info(const JsonAt& root) {
  using TokenPostproc = TokenizerInfo::TokenPostproc;
  root.object();
  TokenizerInfo info;
  each_decoder(root.member_or_null("decoder"), [&](const JsonAt& d) {
    const std::string type = d.string_or("type", "");
    if (type == "ByteLevel") info.token_postproc_method = TokenPostproc::kByteLevel;
    if (type == "ByteFallback") info.token_postproc_method = TokenPostproc::kByteFallback;
    if (type == "Strip" && string_member_is(d, "content", " ") && integer_member_is(d, "start", 1) &&
        integer_member_is(d, "stop", 0)) {
      info.strip_space_in_decode = true;
    }
  });
  each_normalizer(root.member_or_null("normalizer"), [&](const JsonAt& n) {
    if (n.string_or("type", "") == "Prepend" && string_member_is(n, "prepend", "\xE2\x96\x81")) {
      info.prepend_space_in_encode = true;
    }
  });
  return info;
}

}  // namespace graphrt::llm
