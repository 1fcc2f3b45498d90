// The one writer of JSON text in graphrt: string literals (json_string) and
// whole documents (JsonWriter), for every report, trace and response the
// library and the apps write.
//
// What comes out is always valid JSON in valid UTF-8, whatever bytes went in:
// '"' and '\' are escaped, control characters (below 0x20) are written as
// \b \f \n \r \t or \u00XX, and a byte that does not begin a well-formed
// UTF-8 sequence (graphrt/utf8.h) is written as \ufffd, the replacement
// character, one per such byte; well-formed sequences are copied as they
// are. (Names in a model file or text from a tokenizer may be any bytes; a
// report or a response must still parse.) Non-finite numbers, which JSON
// cannot hold, are written as null.
#pragma once

#include "graphrt/export.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// Appends `text` as a JSON string literal, quotes included.
void append_json_string(std::string* out, std::string_view text);
// `text` as a JSON string literal, quotes included.
std::string json_string(std::string_view text);
// The shortest text that reads back as `v` (null when not finite).
void append_json_number(std::string* out, double v);
// `v` with `decimals` digits after the point (null when not finite): for times in traces.
void append_json_fixed(std::string* out, double v, int decimals);

// A document written front to back: commas and colons are placed by the
// writer, so a caller says only what each value is.
//
//   JsonWriter w;
//   w.begin_object().key("name").string(n).key("shape").begin_array();
//   for (int64_t d : shape) w.integer(d);
//   w.end_array().end_object();
//   std::string text = w.take();
class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The next member's name (inside an object; its value follows).
  JsonWriter& key(std::string_view name);
  JsonWriter& string(std::string_view text);
  JsonWriter& integer(int64_t v);
  JsonWriter& unsigned_integer(uint64_t v);
  JsonWriter& number(double v);
  JsonWriter& fixed(double v, int decimals);
  JsonWriter& boolean(bool v);
  JsonWriter& null();
  // A value the caller wrote as JSON itself (another writer's document).
  JsonWriter& raw(std::string_view json);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void before_value();
  void open(char c);
  void close(char c);

  std::string out_;
  std::vector<bool> has_member_;  // per open array/object: a value written in it already
  bool after_key_ = false;
};

}  // namespace graphrt
#pragma GCC visibility pop
