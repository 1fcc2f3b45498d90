// The base's JSON writer (graphrt/json_writer.h): what it writes parses (by
// nlohmann/json, a reader that is not graphrt's, and by graphrt's own) to
// the text that went in, whatever bytes that was.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <random>
#include <string>

#include "graphrt/json_reader.h"
#include "graphrt/json_writer.h"

namespace graphrt {
namespace {

std::string read_back(const std::string& literal) {
  JsonReader r(literal, JsonLimits{1 << 20, 4}, "t");
  std::string s = r.read_string();
  r.expect_end();
  return s;
}

TEST(JsonWriter, EscapesQuotesBackslashesAndEveryControlCharacter) {
  EXPECT_EQ(json_string("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(json_string("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(json_string(std::string("\x00\x01\x1f\x7f", 4)), R"("\u0000\u0001\u001f)" "\x7f\"");
  for (int c = 0; c < 0x20; ++c) {
    const std::string text(1, static_cast<char>(c));
    const std::string literal = json_string(text);
    EXPECT_EQ(nlohmann::json::parse(literal).get<std::string>(), text) << c;
    EXPECT_EQ(read_back(literal), text) << c;
  }
}

TEST(JsonWriter, CopiesUtf8AndReplacesEachByteThatIsNot) {
  const std::string utf8 = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  EXPECT_EQ(json_string(utf8), "\"" + utf8 + "\"");
  // A lone continuation byte, a byte never in UTF-8, an overlong form, a surrogate, a sequence cut short.
  EXPECT_EQ(json_string("a\x80z"), R"("a\ufffdz")");
  EXPECT_EQ(json_string("\xff"), R"("\ufffd")");
  EXPECT_EQ(json_string("\xc0\xaf"), R"("\ufffd\ufffd")");
  EXPECT_EQ(json_string("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  EXPECT_EQ(json_string("\xe2\x82"), R"("\ufffd\ufffd")");
  EXPECT_EQ(read_back(json_string("a\x80z")), "a\xef\xbf\xbdz");
}

// Random bytes: the output is always JSON whose string is the input with each
// byte outside a well-formed sequence replaced; valid UTF-8 in, the same text out.
TEST(JsonWriter, RoundTripsThroughBothReaders) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text(static_cast<size_t>(rng() % 24), '\0');
    for (char& c : text) c = static_cast<char>(rng() % (round % 2 ? 256 : 0x80));
    const std::string literal = json_string(text);
    const std::string ours = read_back(literal);
    const std::string theirs = nlohmann::json::parse(literal).get<std::string>();
    EXPECT_EQ(ours, theirs);
    if (round % 2 == 0) {
      EXPECT_EQ(ours, text);
    }
  }
}

TEST(JsonWriter, PlacesCommasAndColons) {
  JsonWriter w;
  w.begin_object().key("name").string("x\ny").key("shape").begin_array();
  for (int64_t d : {int64_t(1), int64_t(-3), INT64_MIN}) w.integer(d);
  w.end_array().key("empty").begin_object().end_object().key("list").begin_array().begin_array().end_array();
  w.null().boolean(false).number(0.1).number(-0.0).number(NAN).unsigned_integer(UINT64_MAX).fixed(1.23456, 3);
  w.raw("{\"k\":1}").end_array().end_object();
  const std::string text = w.take();
  EXPECT_EQ(text,
            R"({"name":"x\ny","shape":[1,-3,-9223372036854775808],"empty":{},)"
            R"("list":[[],null,false,0.1,-0.0,null,18446744073709551615,1.235,{"k":1}]})");
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["shape"][2].get<int64_t>(), INT64_MIN);
  EXPECT_TRUE(std::signbit(doc["list"][4].get<double>()));
}

}  // namespace
}  // namespace graphrt
