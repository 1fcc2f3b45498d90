#include "llm/tokenizer/normalizer.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <vector>

#include "graphrt/error.h"
#include "llm/tokenizer/regex.h"
#include "llm/tokenizer/string_pattern.h"

namespace graphrt::llm {
namespace {

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& step : steps_) step->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(StringPattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(std::string& text) const override { text = pattern_.replace_all(text, content_); }

 private:
  StringPattern pattern_;
  std::string content_;
};

bool is_ascii(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// NFC, NFD, NFKC or NFKD: ASCII text is the same in all four, so it skips ICU.
class UnicodeNormalizer : public Normalizer {
 public:
  UnicodeNormalizer(const icu::Normalizer2* form, std::string name) : form_(form), name_(std::move(name)) {}
  void normalize(std::string& text) const override {
    if (is_ascii(text)) return;
    UErrorCode status = U_ZERO_ERROR;
    const icu::UnicodeString normalized = form_->normalize(icu::UnicodeString::fromUTF8(text), status);
    if (U_FAILURE(status)) throw Error(ErrorKind::kInternal, name_ + " normalization failed: " + u_errorName(status));
    text.clear();
    normalized.toUTF8String(text);
  }

 private:
  const icu::Normalizer2* form_;
  std::string name_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    icu::UnicodeString s = icu::UnicodeString::fromUTF8(text);
    s.toLower(icu::Locale::getRoot());
    text.clear();
    s.toUTF8String(text);
  }
};

const icu::Normalizer2* unicode_form(const std::string& type, const JsonAt& at) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* form = nullptr;
  if (type == "NFC") form = icu::Normalizer2::getNFCInstance(status);
  if (type == "NFD") form = icu::Normalizer2::getNFDInstance(status);
  if (type == "NFKC") form = icu::Normalizer2::getNFKCInstance(status);
  if (type == "NFKD") form = icu::Normalizer2::getNFKDInstance(status);
  if (U_FAILURE(status) || !form) at.fail(std::string("needs ICU's ") + type + " data: " + u_errorName(status));
  return form;
}

}  // namespace

std::unique_ptr<Normalizer> read_normalizer(const JsonAt& at) {
  if (at.is_null()) return nullptr;
  const std::string type = at.member("type").string();
  if (type == "Sequence") {
    const JsonAt list = at.member("normalizers");
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      auto step = read_normalizer(list.element(i));
      if (step) steps.push_back(std::move(step));
    }
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(at.member("prepend").string());
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(read_string_pattern(at.member("pattern")), at.member("content").string());
  }
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    return std::make_unique<UnicodeNormalizer>(unicode_form(type, at), type);
  }
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  throw Error(ErrorKind::kUnsupported, at.origin + ": '" + at.path + "' has normalizer type " + quote_cut(type) +
                                           ", which graphrt does not implement")
      .with("file", at.origin)
      .with("field", at.path + ".type");
}

}  // namespace graphrt::llm
