// mlc-chat-config.json's tokenizer_info, and its detection from a tokenizer.json as MLC's
// runtime does when the config has none.
#include <functional>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "llm/tokenizer/json_fields.h"

namespace graphrt {
namespace {

using llm::JsonAt;

bool string_member_is(const nlohmann::json& object, const char* key, const char* expected) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() && it->get<std::string>() == expected;
}

bool integer_member_is(const nlohmann::json& object, const char* key, int64_t expected) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() && it->get<int64_t>() == expected;
}

// The decoders of `at` in order, a Sequence's flattened.
void each_decoder(const JsonAt& at, const std::function<void(const JsonAt&)>& visit) {
  if (!at.value.is_object()) return;
  if (at.string_or("type", "") == "Sequence" && at.has_non_null("decoders") && at.member("decoders").value.is_array()) {
    const JsonAt list = at.member("decoders");
    for (size_t i = 0; i < list.value.size(); ++i) each_decoder(list.element(i), visit);
    return;
  }
  visit(at);
}

void each_normalizer(const JsonAt& at, const std::function<void(const JsonAt&)>& visit) {
  if (!at.value.is_object()) return;
  if (at.string_or("type", "") == "Sequence" && at.has_non_null("normalizers") && at.member("normalizers").value.is_array()) {
    const JsonAt list = at.member("normalizers");
    for (size_t i = 0; i < list.value.size(); ++i) each_normalizer(list.element(i), visit);
    return;
  }
  visit(at);
}

}  // namespace

TokenizerInfo TokenizerInfo::from_json_text(const std::string& json_text, const std::string& origin) {
  const nlohmann::json doc = llm::parse_json(json_text, origin);
  const JsonAt root{doc, origin, "tokenizer_info"};
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
  const nlohmann::json doc = llm::parse_json(json_text, origin);
  const JsonAt root{doc, origin, ""};
  root.object();
  TokenizerInfo info;
  each_decoder(root.member_or_null("decoder"), [&](const JsonAt& d) {
    const std::string type = d.string_or("type", "");
    if (type == "ByteLevel") info.token_postproc_method = TokenPostproc::kByteLevel;
    if (type == "ByteFallback") info.token_postproc_method = TokenPostproc::kByteFallback;
    if (type == "Strip" && string_member_is(d.value, "content", " ") && integer_member_is(d.value, "start", 1) &&
        integer_member_is(d.value, "stop", 0)) {
      info.strip_space_in_decode = true;
    }
  });
  each_normalizer(root.member_or_null("normalizer"), [&](const JsonAt& n) {
    if (n.string_or("type", "") == "Prepend" && string_member_is(n.value, "prepend", "\xE2\x96\x81")) {
      info.prepend_space_in_encode = true;
    }
  });
  return info;
}

}  // namespace graphrt
