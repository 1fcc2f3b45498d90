// A forward-only reader of JSON text, for the graph JSON parser: values are
// read in place as the parser meets them, with no document tree in between
// (a graph of a thousand nodes is parsed at a fraction of a tree's cost).
// Malformed text is an Error saying "graph JSON is not valid JSON" and where.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "graphrt/error.h"

namespace graphrt {

class JsonCursor {
 public:
  explicit JsonCursor(const std::string& text) : p_(text.data()), begin_(text.data()), end_(text.data() + text.size()) {}

  // The next value's first character ('{', '[', '"', a digit, '-', 't', 'f', 'n'), or 0 at the end.
  char peek() {
    skip_space();
    return p_ < end_ ? *p_ : 0;
  }
  bool next_is_string() { return peek() == '"'; }
  bool next_is_object() { return peek() == '{'; }
  bool next_is_array() { return peek() == '['; }

  void expect(char c) {
    if (peek() != c) syntax_error(std::string("expected '") + c + "'");
    ++p_;
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  void expect_end() {
    if (peek() != 0) syntax_error("text after the top-level value");
  }

  // Calls member(key) for each member of the object that comes next; member
  // reads or skips the value. `key` (a std::string_view) is valid during the call.
  template <typename Member>
  void object(Member member) {
    expect('{');
    if (consume('}')) return;
    std::string scratch;  // a key with escapes, decoded
    do {
      const std::string_view key = read_key(scratch);
      expect(':');
      member(key);
    } while (consume(','));
    expect('}');
  }

  // Calls element(index) for each element of the array that comes next.
  template <typename Element>
  void array(Element element) {
    expect('[');
    if (consume(']')) return;
    size_t i = 0;
    do {
      element(i++);
    } while (consume(','));
    expect(']');
  }

  std::string read_string() {
    if (peek() != '"') syntax_error("expected a string");
    ++p_;
    std::string out;
    for (;;) {
      const char* run = p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) ++p_;
      out.append(run, p_);
      if (p_ >= end_) syntax_error("unterminated string");
      char c = *p_++;
      if (c == '"') return out;
      if (c != '\\') syntax_error("control character in a string");
      read_escape(&out);
    }
  }

  // An integer-valued number token (no fraction or exponent) that fits in
  // int64; false, with nothing consumed, when the next value is anything else.
  bool read_integer(int64_t* out) {
    skip_space();
    const char* start = p_;
    const char* q = p_;
    bool negative = q < end_ && *q == '-';
    if (negative) ++q;
    if (q >= end_ || *q < '0' || *q > '9') return false;
    uint64_t magnitude = 0;
    const uint64_t limit = negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
    for (; q < end_ && *q >= '0' && *q <= '9'; ++q) {
      uint64_t digit = static_cast<uint64_t>(*q - '0');
      if (magnitude > (limit - digit) / 10) return false;
      magnitude = magnitude * 10 + digit;
    }
    if (q < end_ && (*q == '.' || *q == 'e' || *q == 'E')) return false;
    if (q - start > (negative ? 2 : 1) && start[negative ? 1 : 0] == '0') return false;  // leading zero: not JSON
    p_ = q;
    *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return true;
  }

  // Skips the next value and returns its text (for messages and for values
  // kept as written).
  std::string raw_value() {
    skip_space();
    const char* start = p_;
    skip_value();
    return std::string(start, p_);
  }

  void skip_value(int depth = 0) {
    if (depth > kMaxDepth) syntax_error("nesting deeper than " + std::to_string(kMaxDepth));
    switch (peek()) {
      case '{':
        object([&](std::string_view) { skip_value(depth + 1); });
        return;
      case '[':
        array([&](size_t) { skip_value(depth + 1); });
        return;
      case '"':
        skip_string();
        return;
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return skip_number();
    }
  }

  // Where the cursor is, to re-read a value (see rewind).
  size_t position() const { return static_cast<size_t>(p_ - begin_); }
  void rewind(size_t position) { p_ = begin_ + position; }

  [[noreturn]] void syntax_error(const std::string& what) const {
    throw Error("graph JSON is not valid JSON: " + what + " at byte " + std::to_string(p_ - begin_));
  }

 private:
  static constexpr int kMaxDepth = 256;

  // The next string, in place where it has no escape (most keys), else decoded into `scratch`.
  std::string_view read_key(std::string& scratch) {
    if (peek() != '"') syntax_error("expected a string");
    const char* start = p_ + 1;
    const char* q = start;
    while (q < end_ && *q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20) ++q;
    if (q < end_ && *q == '"') {
      p_ = q + 1;
      return std::string_view(start, static_cast<size_t>(q - start));
    }
    scratch = read_string();
    return scratch;
  }

  void skip_string() {
    std::string ignored;
    (void)read_key(ignored);
  }

  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  void literal(const char* word) {
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) syntax_error("unexpected character");
    p_ += n;
  }

  void digits() {
    if (p_ >= end_ || *p_ < '0' || *p_ > '9') syntax_error("malformed number");
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }

  void skip_number() {
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else {
      digits();
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      digits();
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      digits();
    }
  }

  unsigned hex4() {
    if (end_ - p_ < 4) syntax_error("short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else syntax_error("bad \\u escape");
    }
    return v;
  }

  void read_escape(std::string* out) {
    if (p_ >= end_) syntax_error("unterminated string");
    char c = *p_++;
    switch (c) {
      case '"': case '\\': case '/': out->push_back(c); return;
      case 'b': out->push_back('\b'); return;
      case 'f': out->push_back('\f'); return;
      case 'n': out->push_back('\n'); return;
      case 'r': out->push_back('\r'); return;
      case 't': out->push_back('\t'); return;
      case 'u': break;
      default: syntax_error("bad escape in a string");
    }
    unsigned code = hex4();
    if (code >= 0xDC00 && code <= 0xDFFF) syntax_error("lone low surrogate in a string");
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') syntax_error("lone high surrogate in a string");
      p_ += 2;
      unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) syntax_error("bad surrogate pair in a string");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, code);
  }

  static void append_utf8(std::string* out, unsigned code) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  const char* p_;
  const char* begin_;
  const char* end_;
};

}  // namespace graphrt
