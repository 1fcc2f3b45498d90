#include "llm/tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "graphrt/error.h"
#include "llm/tokenizer/json_fields.h"
#include "llm/tokenizer/utf8.h"

namespace graphrt::llm {

const char* const kGpt2SplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {
// Bounds on one search: plenty for the shipped patterns on any text, small enough that a
// pathological pattern from a hostile file fails within a fraction of a second.
constexpr uint32_t kMatchLimit = 10'000'000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;
}  // namespace

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  ~Compiled() {
    if (context) pcre2_match_context_free(context);
    if (code) pcre2_code_free(code);
  }
};

Regex::Regex(const std::string& pattern, const std::string& where)
    : compiled_(std::make_unique<Compiled>()), where_(where) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                  PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (!compiled_->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    throw Error(where + ": the pattern " + quote_cut(pattern) + " does not compile at offset " +
                std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(message));
  }
  // JIT is an optimisation only: where it is unavailable the interpreter matches the same.
  pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);
  compiled_->context = pcre2_match_context_create(nullptr);
  if (!compiled_->context) throw Error(ErrorKind::kResourceExhausted, "out of memory for a regex match context");
  pcre2_set_match_limit(compiled_->context, kMatchLimit);
  pcre2_set_heap_limit(compiled_->context, kHeapLimitKiB);
}

Regex::~Regex() = default;

std::vector<std::pair<size_t, size_t>> Regex::matches(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(compiled_->code, nullptr);
  if (!data) throw Error(ErrorKind::kResourceExhausted, "out of memory for regex match data");
  const std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> owned(data, pcre2_match_data_free);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start < text.size()) {
    const int rc = pcre2_match(compiled_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data,
                               compiled_->context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      throw Error(ErrorKind::kResourceExhausted,
                  where_ + ": the pattern failed on the text: " + reinterpret_cast<const char*>(message))
          .with("field", where_);
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    const size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      out.emplace_back(begin, end);
      start = end;
    } else {
      // An empty match: search again one character further.
      const size_t n = utf8_sequence_length(text, begin);
      start = begin + (n ? n : 1);
    }
  }
  return out;
}

}  // namespace graphrt::llm
