// libFuzzer target: the base's JSON reader (graphrt/json_reader.h) and writer
// (graphrt/json_writer.h). Any text is read as a document through every
// kind of read (repeated keys refused in every other object), copied out
// through the writer, and the copy read and written again: the two copies
// must be the same text (the writer writes what the reader reads back), or
// the target traps.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "graphrt/json_reader.h"
#include "graphrt/json_writer.h"

namespace {

void copy_value(graphrt::JsonReader& r, graphrt::JsonWriter& w, int depth) {
  switch (r.next_type()) {
    case graphrt::JsonType::kObject: {
      w.begin_object();
      auto member = [&](std::string_view key) {
        w.key(key);
        copy_value(r, w, depth + 1);
      };
      if (depth % 2) r.object_unique_keys(member);
      else r.object(member);
      w.end_object();
      return;
    }
    case graphrt::JsonType::kArray:
      w.begin_array();
      r.array([&](size_t) { copy_value(r, w, depth + 1); });
      w.end_array();
      return;
    case graphrt::JsonType::kString:
      w.string(r.read_string());
      return;
    case graphrt::JsonType::kBool:
      w.boolean(r.read_bool());
      return;
    case graphrt::JsonType::kNull:
      if (!r.consume_null()) r.fail("expected null");
      w.null();
      return;
    default: {
      int64_t i = 0;
      uint64_t u = 0;
      if (r.read_integer(&i)) w.integer(i);
      else if (r.read_unsigned(&u)) w.unsigned_integer(u);
      else w.number(r.read_double());
    }
  }
}

std::string copy(const std::string& text) {
  graphrt::JsonReader r(text, graphrt::JsonLimits{1 << 20, 32}, "fuzz input");
  graphrt::JsonWriter w;
  copy_value(r, w, 0);
  r.expect_end();
  return w.take();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string first;
  try {
    first = copy(text);
  } catch (const graphrt::Error&) {
    return 0;
  }
  // Any escaping of the input's bytes as a string literal reads back (as UTF-8).
  (void)copy(graphrt::json_string(text));
  if (copy(first) != first) __builtin_trap();
  return 0;
}
