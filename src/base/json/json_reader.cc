// The JSON reader's slow paths: escapes, UTF-8 beyond ASCII, numbers read as
// doubles, skipping, and its errors.
#include "graphrt/json_reader.h"

#include <charconv>
#include <cstring>

#include "graphrt/utf8.h"

namespace graphrt {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

void append_code_point(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

JsonReader::JsonReader(std::string_view text, JsonLimits limits, const char* subject)
    : p_(text.data()), begin_(text.data()), end_(text.data() + text.size()), limits_(limits), subject_(subject) {
  if (text.size() > limits.max_bytes)
    throw Error(ErrorKind::kResourceExhausted, std::string(subject) + " is " + std::to_string(text.size()) +
                                                   " bytes, more than the " + std::to_string(limits.max_bytes) +
                                                   " allowed");
}

JsonType JsonReader::next_type() {
  switch (peek()) {
    case 0: return JsonType::kEnd;
    case '{': return JsonType::kObject;
    case '[': return JsonType::kArray;
    case '"': return JsonType::kString;
    case 't': case 'f': return JsonType::kBool;
    case 'n': return JsonType::kNull;
    case '-': return JsonType::kNumber;
    default: return is_digit(*p_) ? JsonType::kNumber : JsonType::kInvalid;
  }
}

void JsonReader::fail(const std::string& why) const { fail_at(offset(), why); }

void JsonReader::fail_at(size_t at, const std::string& why) const {
  const std::string where = std::to_string(at);
  const std::string head = subject_[0] ? std::string(subject_) + " is not valid JSON: " : "not valid JSON: ";
  throw Error(ErrorKind::kInvalidArgument, head + why + " at byte " + where).with("offset", where);
}

void JsonReader::fail_expected(char c) const {
  if (p_ >= end_) fail(std::string("expected '") + c + "', found the end of the text");
  fail(std::string("expected '") + c + "'");
}

void JsonReader::fail_depth() const {
  fail("arrays and objects nested more than " + std::to_string(limits_.max_depth) + " deep");
}

void JsonReader::fail_repeated_key(size_t at, std::string_view key) const {
  try {
    fail_at(at, "the member " + quote_untrusted(std::string(key)) + " is given twice in one object");
  } catch (Error& e) {
    throw e.with("member", shown_name(std::string(key)));
  }
}

uint32_t JsonReader::read_hex4() {
  if (end_ - p_ < 4) fail("a \\u escape cut short");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i, ++p_) {
    const char c = *p_;
    uint32_t d = 16;
    if (is_digit(c)) d = static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') d = static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = static_cast<uint32_t>(c - 'A' + 10);
    if (d == 16) fail("a \\u escape with a character that is not hexadecimal");
    v = v * 16 + d;
  }
  return v;
}

// After a backslash: one escape, decoded into `out` (a \u surrogate pair joined).
void JsonReader::append_escape(std::string* out) {
  if (p_ >= end_) fail("a string without its closing quote");
  const char e = *p_++;
  switch (e) {
    case '"': case '\\': case '/': out->push_back(e); return;
    case 'b': out->push_back('\b'); return;
    case 'f': out->push_back('\f'); return;
    case 'n': out->push_back('\n'); return;
    case 'r': out->push_back('\r'); return;
    case 't': out->push_back('\t'); return;
    case 'u': break;
    default: --p_; fail(std::string("an unknown escape '\\") + e + "'");
  }
  uint32_t cp = read_hex4();
  if (cp >= 0xDC00 && cp <= 0xDFFF) fail("a \\u escape with a low surrogate first");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') fail("a high surrogate \\u escape without its low half");
    p_ += 2;
    const uint32_t low = read_hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail("a high surrogate \\u escape without its low half");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  append_code_point(out, cp);
}

// At a byte >= 0x80: one UTF-8 sequence, copied; anything else is refused (JSON text is UTF-8).
void JsonReader::append_utf8_sequence(std::string* out) {
  const size_t n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(p_), static_cast<size_t>(end_ - p_));
  if (n == 0) fail("a string with bytes that are not UTF-8");
  out->append(p_, n);
  p_ += n;
}

const char* json_type_name(JsonType type) {
  switch (type) {
    case JsonType::kObject: return "object";
    case JsonType::kArray: return "array";
    case JsonType::kString: return "string";
    case JsonType::kNumber: return "number";
    case JsonType::kBool: return "boolean";
    case JsonType::kNull: return "null";
    case JsonType::kEnd: return "nothing";
    default: return "malformed value";
  }
}

std::string JsonReader::read_string_slow() {
  expect('"');
  std::string out;
  for (;;) {
    const char* run = p_;
    p_ = plain_run(p_);
    out.append(run, p_);
    if (p_ >= end_) fail("a string without its closing quote");
    const unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      return out;
    }
    if (c == '\\') {
      ++p_;
      append_escape(&out);
    } else if (c >= 0x80) {
      append_utf8_sequence(&out);
    } else {
      fail("a control character inside a string");
    }
  }
}

int64_t JsonReader::read_int64() {
  int64_t v = 0;
  if (read_integer(&v)) return v;
  if (!next_is_number()) fail("expected an integer");
  const size_t start = offset();
  skip_number();
  const std::string_view text(begin_ + start, offset() - start);
  if (text.find_first_of(".eE") != std::string_view::npos) fail_at(start, "expected an integer, not a fraction or exponent");
  fail_at(start, "an integer outside the 64-bit range");
}

void JsonReader::skip_number() {
  if (p_ < end_ && *p_ == '-') ++p_;
  if (p_ >= end_ || !is_digit(*p_)) fail("expected a value");
  if (*p_ == '0' && p_ + 1 < end_ && is_digit(p_[1])) fail("a number with a leading zero");
  while (p_ < end_ && is_digit(*p_)) ++p_;
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (p_ >= end_ || !is_digit(*p_)) fail("a number with no digit after '.'");
    while (p_ < end_ && is_digit(*p_)) ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ >= end_ || !is_digit(*p_)) fail("a number with no digit in its exponent");
    while (p_ < end_ && is_digit(*p_)) ++p_;
  }
}

std::string_view JsonReader::read_number_text() {
  if (!next_is_number()) fail("expected a number");
  const char* start = p_;
  skip_number();
  return std::string_view(start, static_cast<size_t>(p_ - start));
}

double JsonReader::read_double() {
  skip_space();
  const size_t start = offset();
  const std::string_view text = read_number_text();
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    // Too small is zero (what a double can hold of it); too large has no value.
    const size_t e = text.find_first_of("eE");
    if (e == std::string_view::npos || e + 1 >= text.size() || text[e + 1] != '-')
      fail_at(start, "a number past the range of a double");
    return text[0] == '-' ? -0.0 : 0.0;
  }
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) fail_at(start, "a malformed number");
  return v;
}

void JsonReader::skip_literal(const char* word) {
  const size_t n = std::strlen(word);
  if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) fail("expected a value");
  p_ += n;
}

bool JsonReader::read_bool() {
  const char c = peek();
  if (c == 't') {
    skip_literal("true");
    return true;
  }
  if (c != 'f') fail("expected true or false");
  skip_literal("false");
  return false;
}

bool JsonReader::consume_null() {
  if (peek() != 'n') return false;
  skip_literal("null");
  return true;
}

void JsonReader::skip_value() {
  switch (peek()) {
    case '{': object([this](std::string_view) { skip_value(); }); return;
    case '[': array([this](size_t) { skip_value(); }); return;
    case '"': {
      std::string scratch;
      (void)read_key(scratch);
      return;
    }
    case 't': return skip_literal("true");
    case 'f': return skip_literal("false");
    case 'n': return skip_literal("null");
    case 0: fail("expected a value, found the end of the text");
    default: return skip_number();
  }
}

std::string JsonReader::raw_value() {
  skip_space();
  const char* start = p_;
  skip_value();
  return std::string(start, p_);
}

}  // namespace graphrt
