// The base's JSON reader (graphrt/json_reader.h): limits, exact integers,
// repeated keys, UTF-8, and the byte offsets its errors carry.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/json_reader.h"

namespace graphrt {
namespace {

const JsonLimits kLimits{1 << 20, 16};

// The error reading `text` with `read` raised, or an empty Error when none.
template <typename Read>
Error error_of(const std::string& text, Read read, JsonLimits limits = kLimits) {
  try {
    JsonReader r(text, limits, "the test text");
    read(r);
    r.expect_end();
  } catch (const Error& e) {
    return e;
  }
  return Error("");
}

Error skip_error(const std::string& text, JsonLimits limits = kLimits) {
  return error_of(text, [](JsonReader& r) { r.skip_value(); }, limits);
}

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonReader, NestingIsBoundedByTheCallersLimit) {
  EXPECT_STREQ(skip_error(nested(16)).what(), "");
  const Error e = skip_error(nested(17));
  EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("nested more than 16 deep"), std::string::npos) << e.what();
  EXPECT_EQ(e.context_value("offset"), "16");
  // Objects count as arrays do, and another caller's limit is its own.
  EXPECT_NE(std::string(skip_error("{\"a\":{\"b\":[1]}}", JsonLimits{100, 2}).what()).find("more than 2 deep"),
            std::string::npos);
  EXPECT_STREQ(skip_error(nested(200), JsonLimits{1000, 256}).what(), "");
}

TEST(JsonReader, TextLongerThanTheLimitIsRefusedUnread) {
  const Error e = skip_error("[1, 2, 3]", JsonLimits{8, 4});
  EXPECT_EQ(e.kind(), ErrorKind::kResourceExhausted);
  EXPECT_STREQ(e.what(), "the test text is 9 bytes, more than the 8 allowed");
  EXPECT_STREQ(skip_error("[1, 2, 3]", JsonLimits{9, 4}).what(), "");
}

TEST(JsonReader, IntegersAreExactBeyondADoublesPrecision) {
  JsonReader r("[9007199254740993, -9223372036854775808, 9223372036854775807, 18446744073709551615, 0, -0]",
               kLimits, "t");
  std::vector<int64_t> signed_values;
  uint64_t big = 0;
  r.array([&](size_t i) {
    int64_t v = 0;
    if (i == 3) {
      EXPECT_FALSE(r.read_integer(&v));  // past int64: nothing consumed
      ASSERT_TRUE(r.read_unsigned(&big));
      return;
    }
    ASSERT_TRUE(r.read_integer(&v));
    signed_values.push_back(v);
  });
  r.expect_end();
  EXPECT_EQ(signed_values, (std::vector<int64_t>{9007199254740993LL, INT64_MIN, INT64_MAX, 0, 0}));
  EXPECT_EQ(big, UINT64_MAX);
}

TEST(JsonReader, ReadInt64SaysWhatCameInstead) {
  auto int_error = [](const std::string& text) {
    return std::string(error_of(text, [](JsonReader& r) { r.read_int64(); }).what());
  };
  EXPECT_NE(int_error("9223372036854775808").find("outside the 64-bit range at byte 0"), std::string::npos);
  EXPECT_NE(int_error(" 1.5").find("not a fraction or exponent at byte 1"), std::string::npos);
  EXPECT_NE(int_error("1e3").find("not a fraction or exponent"), std::string::npos);
  EXPECT_NE(int_error("\"1\"").find("expected an integer"), std::string::npos);
  EXPECT_NE(int_error("012").find("leading zero"), std::string::npos);
  EXPECT_EQ(int_error("-42"), "");
}

TEST(JsonReader, DoublesAndTheirRange) {
  JsonReader r("[0.1, -2.5e3, 1e-400, 5]", kLimits, "t");
  std::vector<double> v;
  r.array([&](size_t) { v.push_back(r.read_double()); });
  EXPECT_EQ(v, (std::vector<double>{0.1, -2500.0, 0.0, 5.0}));
  const Error e = error_of("[1, 2e400]", [](JsonReader& r) { r.array([&](size_t) { r.read_double(); }); });
  EXPECT_NE(std::string(e.what()).find("past the range of a double at byte 4"), std::string::npos) << e.what();
}

TEST(JsonReader, RepeatedKeysAreRefusedWhereTheCallerAsks) {
  const std::string text = R"({"a": 1, "b": {"a": 2}, "a": 3})";
  std::vector<std::string> keys;
  JsonReader lenient(text, kLimits, "t");
  lenient.object([&](std::string_view k) {
    keys.emplace_back(k);
    lenient.skip_value();
  });
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "a"}));

  const Error e = error_of(text, [](JsonReader& r) {
    r.object_unique_keys([&](std::string_view) { r.skip_value(); });
  });
  EXPECT_NE(std::string(e.what()).find("the member 'a' is given twice in one object at byte 24"), std::string::npos)
      << e.what();
  EXPECT_EQ(e.context_value("member"), "a");
  // The same name in two objects is not a repeat; an escaped spelling of a name is the same name.
  EXPECT_STREQ(error_of(R"([{"a": 1}, {"a": 2}])", [](JsonReader& r) {
                 r.array([&](size_t) { r.object_unique_keys([&](std::string_view) { r.skip_value(); }); });
               }).what(), "");
  EXPECT_NE(std::string(error_of(R"({"a": 1, "\u0061": 2})", [](JsonReader& r) {
                          r.object_unique_keys([&](std::string_view) { r.skip_value(); });
                        }).what()).find("given twice"),
            std::string::npos);
}

TEST(JsonReader, StringsDecodeEscapesToUtf8) {
  JsonReader r(R"(["a\"b\\c\/\b\f\n\r\t", "\u00e9\u20ac", "\ud83d\ude00", "h\u00e9llo w\u00f6rld", "caf)"
               "\xc3\xa9\"]",
               kLimits, "t");
  std::vector<std::string> v;
  r.array([&](size_t) { v.push_back(r.read_string()); });
  r.expect_end();
  EXPECT_EQ(v, (std::vector<std::string>{"a\"b\\c/\b\f\n\r\t", "\xc3\xa9\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                         "h\xc3\xa9llo w\xc3\xb6rld", "caf\xc3\xa9"}));
}

TEST(JsonReader, BytesThatAreNotUtf8AreRefused) {
  const std::vector<std::string> bad = {
      "\xff",              // never a UTF-8 byte
      "\x80",              // a continuation byte alone
      "\xc0\xaf",          // overlong '/'
      "\xe0\x80\xaf",      // overlong, three bytes
      "\xed\xa0\x80",      // a surrogate
      "\xf4\x90\x80\x80",  // past U+10FFFF
      "\xe2\x82",          // cut short by the quote
  };
  for (const std::string& bytes : bad) {
    const std::string text = "[\"ok\", \"ab" + bytes + "\"]";
    const Error e = skip_error(text);
    EXPECT_NE(std::string(e.what()).find("bytes that are not UTF-8 at byte 10"), std::string::npos) << e.what();
    // As a member name too, and read as a string value.
    EXPECT_NE(std::string(skip_error("{\"k" + bytes + "\": 1}").what()).find("not UTF-8"), std::string::npos);
    EXPECT_NE(std::string(error_of("\"" + bytes + "\"", [](JsonReader& r) { r.read_string(); }).what())
                  .find("not UTF-8"),
              std::string::npos);
  }
  for (const char* escape : {R"("\udc00")", R"("\ud800")", R"("\ud800\u0041")", R"("\u12")", R"("\x41")"})
    EXPECT_NE(std::string(error_of(escape, [](JsonReader& r) { r.read_string(); }).what()).find("not valid JSON"),
              std::string::npos)
        << escape;
}

TEST(JsonReader, ErrorsCarryTheByteOffset) {
  struct Case {
    const char* text;
    const char* why;
    const char* offset;
  };
  const Case cases[] = {
      {"{\"a\": tru}", "expected a value", "6"},
      {"[1, 2,]", "expected a value", "6"},
      {"[1 2]", "expected ']'", "3"},
      {"{\"a\" 1}", "expected ':'", "5"},
      {"{1: 2}", "expected a member name", "1"},
      {"[01]", "leading zero", "1"},
      {"[1.]", "no digit after '.'", "3"},
      {"[1e+]", "no digit in its exponent", "4"},
      {"\"abc", "without its closing quote", "4"},
      {"\"a\tb\"", "a control character inside a string", "2"},
      {"[1] x", "text after the top-level value", "4"},
      {"", "expected a value, found the end of the text", "0"},
      {"[", "expected a value, found the end of the text", "1"},
  };
  for (const Case& c : cases) {
    const Error e = skip_error(c.text);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("the test text is not valid JSON: ", 0), 0u) << what;
    EXPECT_NE(what.find(c.why), std::string::npos) << c.text << ": " << what;
    EXPECT_EQ(e.context_value("offset"), c.offset) << c.text << ": " << what;
    EXPECT_NE(what.find(std::string(" at byte ") + c.offset), std::string::npos) << what;
  }
}

TEST(JsonReader, RawValueRewindAndTypes) {
  JsonReader r(" {\"k\": [1, {\"x\": null}], \"b\": true, \"s\": \"t\", \"n\": -1.5e2}", kLimits, "t");
  std::vector<JsonType> types;
  r.object([&](std::string_view key) {
    types.push_back(r.next_type());
    if (key == "k") {
      const size_t at = r.offset();
      EXPECT_EQ(r.raw_value(), "[1, {\"x\": null}]");
      r.rewind(at);
      r.skip_value();
    } else if (key == "b") {
      EXPECT_TRUE(r.read_bool());
    } else if (key == "n") {
      EXPECT_EQ(r.read_number_text(), "-1.5e2");
    } else {
      EXPECT_FALSE(r.consume_null());
      EXPECT_EQ(r.read_string(), "t");
    }
  });
  r.expect_end();
  EXPECT_EQ(types, (std::vector<JsonType>{JsonType::kArray, JsonType::kBool, JsonType::kString, JsonType::kNumber}));
}

}  // namespace
}  // namespace graphrt
