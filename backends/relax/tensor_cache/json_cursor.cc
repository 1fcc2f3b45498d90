#include "backends/relax/tensor_cache/json_cursor.h"

#include <cstring>
#include <limits>

namespace graphrt {
namespace relax {
namespace tensor_cache {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

void append_utf8(std::string* out, uint32_t cp) {
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

void JsonCursor::fail(const std::string& why) const {
  throw Error(ErrorKind::kInvalidArgument, "not valid JSON: " + why + " at byte " + std::to_string(offset()))
      .with("offset", std::to_string(offset()));
}

void JsonCursor::skip_space() {
  while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
}

char JsonCursor::peek() {
  skip_space();
  return p_ < end_ ? *p_ : 0;
}

void JsonCursor::expect(char c) {
  if (peek() != c) fail(std::string("expected '") + c + "'");
  ++p_;
}

bool JsonCursor::consume(char c) {
  if (peek() != c) return false;
  ++p_;
  return true;
}

void JsonCursor::expect_end() {
  if (peek() != 0) fail("text after the top-level value");
}

void JsonCursor::enter(char open) {
  if (depth_ >= kMaxDepth) fail("arrays and objects nested more than " + std::to_string(kMaxDepth) + " deep");
  expect(open);
  ++depth_;
}

uint32_t JsonCursor::read_hex4() {
  if (end_ - p_ < 4) fail("a \\u escape cut short");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i, ++p_) {
    const char c = *p_;
    const uint32_t d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : 16;
    if (d == 16) fail("a \\u escape with a character that is not hexadecimal");
    v = v * 16 + d;
  }
  return v;
}

// After "\u": one code point, a surrogate pair joined.
uint32_t JsonCursor::read_escape_code_point() {
  const uint32_t first = read_hex4();
  if (first >= 0xDC00 && first <= 0xDFFF) fail("a \\u escape with a low surrogate first");
  if (first < 0xD800 || first > 0xDBFF) return first;
  if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') fail("a high surrogate \\u escape without its low half");
  p_ += 2;
  const uint32_t second = read_hex4();
  if (second < 0xDC00 || second > 0xDFFF) fail("a high surrogate \\u escape without its low half");
  return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
}

std::string JsonCursor::read_string() {
  expect('"');
  std::string out;
  while (true) {
    if (p_ >= end_) fail("a string without its closing quote");
    const char c = *p_++;
    if (c == '"') return out;
    if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string");
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (p_ >= end_) fail("a string without its closing quote");
    const char e = *p_++;
    switch (e) {
      case '"': case '\\': case '/': out.push_back(e); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': append_utf8(&out, read_escape_code_point()); break;
      default: --p_; fail(std::string("an unknown escape '\\") + e + "'");
    }
  }
}

int64_t JsonCursor::read_int() {
  skip_space();
  const char* start = p_;
  const bool negative = p_ < end_ && *p_ == '-';
  if (negative) ++p_;
  if (p_ >= end_ || !is_digit(*p_)) fail("expected an integer");
  if (*p_ == '0' && p_ + 1 < end_ && is_digit(p_[1])) fail("a number with a leading zero");
  uint64_t v = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t(std::numeric_limits<int64_t>::max());
  for (; p_ < end_ && is_digit(*p_); ++p_) {
    const uint64_t d = static_cast<uint64_t>(*p_ - '0');
    if (v > (limit - d) / 10) {
      p_ = start;
      fail("an integer outside the 64-bit range");
    }
    v = v * 10 + d;
  }
  if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) fail("expected an integer, not a fraction or exponent");
  return negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

void JsonCursor::skip_number() {
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

void JsonCursor::skip_literal() {
  for (const char* word : {"true", "false", "null"}) {
    const size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) >= n && std::memcmp(p_, word, n) == 0) {
      p_ += n;
      return;
    }
  }
  fail("expected a value");
}

void JsonCursor::skip_value() {
  switch (peek()) {
    case '{': object([this](const std::string&) { skip_value(); }); break;
    case '[': array([this](size_t) { skip_value(); }); break;
    case '"': read_string(); break;
    case 't': case 'f': case 'n': skip_literal(); break;
    case 0: fail("expected a value, found the end of the text");
    default: skip_number();
  }
}

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
