// The one reader of JSON text in graphrt (RFC 8259): a forward-only cursor
// that hands values to its caller as it meets them, with no document tree in
// between, so memory grows with what the caller keeps, never with the text.
//
// Every caller says how much it accepts (JsonLimits: bytes of text, depth of
// nesting), since what is reasonable differs per format: a graph JSON is
// megabytes, a request body what the server allows, a manifest needs four
// levels. Integers are read exactly (int64 and uint64, never through a
// double), strings are decoded to UTF-8 and must be UTF-8 in the text, and a
// caller that refuses a repeated member name reads its objects with
// object_unique_keys. Malformed text is one graphrt::Error (kind invalid
// argument) saying "<subject> is not valid JSON: <why> at byte <N>", with the
// offset in its "offset" context value.
//
// The hot paths (whitespace, punctuation, keys and strings without escapes,
// integers) are inline here: graph JSON of thousands of nodes is read through
// them, and a call per token would show in load time.
#pragma once

#include "graphrt/export.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "graphrt/error.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

struct JsonLimits {
  size_t max_bytes;  // longer text is refused before a byte of it is read (resource exhausted)
  int max_depth;     // arrays and objects nested deeper are refused
};

// What the next value is, from its first character.
enum class JsonType { kEnd, kObject, kArray, kString, kNumber, kBool, kNull, kInvalid };
// The type's name in messages: "object", "array", "string", "number", "boolean", "null";
// "nothing" at the end, "malformed value" for text that starts no value.
const char* json_type_name(JsonType type);

class JsonReader {
 public:
  // `subject` names the text in messages ("graph JSON", "the manifest"); it must outlive the
  // reader (a literal). Throws when `text` is longer than limits.max_bytes.
  JsonReader(std::string_view text, JsonLimits limits, const char* subject);

  // The next value's first character ('{', '[', '"', a digit, '-', 't', 'f', 'n'), or 0 at the end.
  char peek() {
    skip_space();
    return p_ < end_ ? *p_ : 0;
  }
  JsonType next_type();
  bool next_is_string() { return peek() == '"'; }
  bool next_is_object() { return peek() == '{'; }
  bool next_is_array() { return peek() == '['; }
  bool next_is_number() {
    const char c = peek();
    return c == '-' || (c >= '0' && c <= '9');
  }

  void expect(char c) {
    if (peek() != c) fail_expected(c);
    ++p_;
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  // Only whitespace may follow the top-level value.
  void expect_end() {
    if (peek() != 0) fail("text after the top-level value");
  }

  // Calls member(key) for each member of the object that comes next; member
  // must read or skip the value. `key` (a std::string_view) is valid during the call.
  template <typename Member>
  void object(Member member) {
    enter('{');
    if (!consume('}')) {
      std::string scratch;  // a key with escapes, decoded
      do {
        const std::string_view key = read_key(scratch);
        expect(':');
        member(key);
      } while (consume(','));
      expect('}');
    }
    --depth_;
  }

  // object(), refusing a member name given twice in the same object (the
  // error names it, and carries it as its "member" context value): for
  // formats where which of two values counts would be a guess.
  template <typename Member>
  void object_unique_keys(Member member) {
    std::unordered_set<std::string> seen;
    enter('{');
    if (!consume('}')) {
      std::string scratch;
      do {
        const size_t at = (skip_space(), offset());
        const std::string_view key = read_key(scratch);
        if (!seen.emplace(key).second) fail_repeated_key(at, key);
        expect(':');
        member(key);
      } while (consume(','));
      expect('}');
    }
    --depth_;
  }

  // Calls element(index) for each element of the array that comes next.
  template <typename Element>
  void array(Element element) {
    enter('[');
    if (!consume(']')) {
      size_t i = 0;
      do {
        element(i++);
      } while (consume(','));
      expect(']');
    }
    --depth_;
  }

  // A string value, escapes decoded (\u as UTF-8, surrogate pairs joined).
  std::string read_string() {
    if (peek() != '"') fail("expected a string");
    const char* start = p_ + 1;
    const char* q = plain_run(start);
    if (q < end_ && *q == '"') {
      p_ = q + 1;
      return std::string(start, q);
    }
    return read_string_slow();
  }

  // An integer token (no fraction or exponent) within int64; false, with
  // nothing consumed, when the next value is anything else.
  bool read_integer(int64_t* out) {
    skip_space();
    const char* q = p_;
    const bool negative = q < end_ && *q == '-';
    if (negative) ++q;
    uint64_t magnitude = 0;
    if (!scan_integer(&q, negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX), &magnitude)) return false;
    p_ = q;
    *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return true;
  }
  // The same for a non-negative integer within uint64.
  bool read_unsigned(uint64_t* out) {
    skip_space();
    const char* q = p_;
    if (!scan_integer(&q, UINT64_MAX, out)) return false;
    p_ = q;
    return true;
  }
  // An integer within int64, or an error saying what came instead.
  int64_t read_int64();
  // Any number, as the nearest double; a number past double's range is refused.
  double read_double();
  // A number's text as written, checked against JSON's grammar (for values kept exactly).
  std::string_view read_number_text();
  bool read_bool();
  // True (and consumed) when the next value is null.
  bool consume_null();

  // Skips the next value, checking it, and returns its text (for messages and
  // values kept as written).
  std::string raw_value();
  void skip_value();

  // Where the cursor is, in bytes from the start of the text, to re-read a value (rewind).
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  void rewind(size_t offset) { p_ = begin_ + offset; }
  // The "not valid JSON" error at the cursor.
  [[noreturn]] void fail(const std::string& why) const;
  // The same at another offset (of a value the caller read before).
  [[noreturn]] void fail_at(size_t offset, const std::string& why) const;

 private:
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  // Past the characters of a string that need no decoding (ASCII, no quote, backslash or control).
  const char* plain_run(const char* q) const {
    while (q < end_) {
      const unsigned char c = static_cast<unsigned char>(*q);
      if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
      ++q;
    }
    return q;
  }
  // The next string, in place where it needs no decoding (most keys), else decoded into `scratch`.
  std::string_view read_key(std::string& scratch) {
    if (peek() != '"') fail("expected a member name (a string)");
    const char* start = p_ + 1;
    const char* q = plain_run(start);
    if (q < end_ && *q == '"') {
      p_ = q + 1;
      return std::string_view(start, static_cast<size_t>(q - start));
    }
    scratch = read_string_slow();
    return scratch;
  }
  // Digits at *q within `limit`, not followed by a fraction or an exponent, no leading zero.
  bool scan_integer(const char** q, uint64_t limit, uint64_t* out) const {
    const char* s = *q;
    if (s >= end_ || *s < '0' || *s > '9') return false;
    if (*s == '0' && s + 1 < end_ && s[1] >= '0' && s[1] <= '9') return false;
    uint64_t v = 0;
    for (; s < end_ && *s >= '0' && *s <= '9'; ++s) {
      const uint64_t digit = static_cast<uint64_t>(*s - '0');
      if (v > (limit - digit) / 10) return false;
      v = v * 10 + digit;
    }
    if (s < end_ && (*s == '.' || *s == 'e' || *s == 'E')) return false;
    *q = s;
    *out = v;
    return true;
  }
  void enter(char open) {
    if (depth_ >= limits_.max_depth) fail_depth();
    expect(open);
    ++depth_;
  }
  std::string read_string_slow();
  void append_escape(std::string* out);
  void append_utf8_sequence(std::string* out);
  uint32_t read_hex4();
  void skip_number();
  void skip_literal(const char* word);
  [[noreturn]] void fail_expected(char c) const;
  [[noreturn]] void fail_depth() const;
  [[noreturn]] void fail_repeated_key(size_t at, std::string_view key) const;

  const char* p_;
  const char* begin_;
  const char* end_;
  JsonLimits limits_;
  const char* subject_;
  int depth_ = 0;
};

}  // namespace graphrt
#pragma GCC visibility pop
