#include "graphrt/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "graphrt/utf8.h"

namespace graphrt {

namespace {

const char kHex[] = "0123456789abcdef";

void append_control(std::string* out, unsigned char c) {
  switch (c) {
    case '\b': out->append("\\b"); return;
    case '\f': out->append("\\f"); return;
    case '\n': out->append("\\n"); return;
    case '\r': out->append("\\r"); return;
    case '\t': out->append("\\t"); return;
    default:
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xF]);
  }
}

}  // namespace

void append_json_string(std::string* out, std::string_view text) {
  out->push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t run = 0;  // start of the bytes copied as they are
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    size_t sequence = 0;
    if (c >= 0x80) {
      sequence = utf8_sequence_length(p + i, n - i);
      if (sequence) {
        i += sequence;
        continue;
      }
    }
    out->append(text.data() + run, i - run);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      append_control(out, c);
    } else {
      out->append("\\ufffd");
    }
    run = ++i;
  }
  out->append(text.data() + run, n - run);
  out->push_back('"');
}

std::string json_string(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  append_json_string(&out, text);
  return out;
}

void append_json_number(std::string* out, double v) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  // to_chars writes "-0", which JSON readers take for the integer 0: the sign would be lost.
  if (v == 0 && std::signbit(v)) {
    out->append("-0.0");
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

void append_json_fixed(std::string* out, double v, int decimals) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, decimals);
  if (r.ec == std::errc()) {
    out->append(buf, r.ptr);
    return;
  }
  append_json_number(out, v);  // too many digits for the buffer: the shortest form instead
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_member_.empty()) {
    if (has_member_.back()) out_.push_back(',');
    has_member_.back() = true;
  }
}

void JsonWriter::open(char c) {
  before_value();
  out_.push_back(c);
  has_member_.push_back(false);
}

void JsonWriter::close(char c) {
  out_.push_back(c);
  if (!has_member_.empty()) has_member_.pop_back();
}

JsonWriter& JsonWriter::begin_object() { return open('{'), *this; }
JsonWriter& JsonWriter::end_object() { return close('}'), *this; }
JsonWriter& JsonWriter::begin_array() { return open('['), *this; }
JsonWriter& JsonWriter::end_array() { return close(']'), *this; }

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  append_json_string(&out_, name);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  before_value();
  append_json_string(&out_, text);
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t v) {
  before_value();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
  return *this;
}

JsonWriter& JsonWriter::unsigned_integer(uint64_t v) {
  before_value();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
  return *this;
}

JsonWriter& JsonWriter::number(double v) {
  before_value();
  append_json_number(&out_, v);
  return *this;
}

JsonWriter& JsonWriter::fixed(double v, int decimals) {
  before_value();
  append_json_fixed(&out_, v, decimals);
  return *this;
}

JsonWriter& JsonWriter::boolean(bool v) {
  before_value();
  out_.append(v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_.append("null");
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  out_.append(json);
  return *this;
}

}  // namespace graphrt
