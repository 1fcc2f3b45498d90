// A forward-only reader of JSON text for the tensor cache's manifest
// (tensor-cache.json): values are read in place as the manifest reader meets
// them, with no document tree in between, so memory grows with the records
// kept, never with the text (a hostile manifest of a million nested or
// unknown values costs nothing but the time to skip them). Malformed text is
// one graphrt::Error saying "not valid JSON", why, and at which byte.
//
// (graph/ has a reader of the same kind for graph JSON; the layers keep the
// Relax back end from using it.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"

namespace graphrt {
namespace relax {
namespace tensor_cache {

class JsonCursor {
 public:
  // How deeply arrays and objects may nest (the manifest needs 4).
  static constexpr int kMaxDepth = 64;

  JsonCursor(const char* data, size_t size) : p_(data), begin_(data), end_(data + size) {}

  // The next value's first character, or 0 at the end of the text.
  char peek();
  void expect(char c);
  bool consume(char c);
  void expect_end();

  // Calls member(key) for each member of the object that comes next; member
  // must read or skip the value.
  template <typename Member>
  void object(Member member) {
    enter('{');
    if (!consume('}')) {
      do {
        if (peek() != '"') fail("expected a member name (a string)");
        const std::string key = read_string();
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
      do element(i++);
      while (consume(','));
      expect(']');
    }
    --depth_;
  }

  // A string value (escapes decoded, \u as UTF-8).
  std::string read_string();
  // An integer value: no fraction or exponent, within int64.
  int64_t read_int();
  // Any value, checked and dropped.
  void skip_value();
  // Where the cursor is, in bytes from the start.
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  // Throws the "not valid JSON" error at the current position.
  [[noreturn]] void fail(const std::string& why) const;

 private:
  void enter(char open);
  void skip_space();
  void skip_number();
  void skip_literal();
  uint32_t read_hex4();
  uint32_t read_escape_code_point();

  const char* p_;
  const char* begin_;
  const char* end_;
  int depth_ = 0;
};

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
