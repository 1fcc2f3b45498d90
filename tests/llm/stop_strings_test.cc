// Stop strings over streamed text: nothing of a stop string leaks, nothing before it is lost.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "llm/generation/stop_strings.h"

namespace {

using graphrt::StopStrings;

std::string run(StopStrings& stops, const std::vector<std::string>& pieces, std::vector<std::string>* released = nullptr) {
  std::string out;
  for (const std::string& piece : pieces) {
    std::string r = stops.push(piece);
    if (released) released->push_back(r);
    out += r;
  }
  return out + stops.flush();
}

TEST(StopStrings, CutsBeforeAMatchSplitAcrossPieces) {
  StopStrings stops({"\nUser:"});
  std::vector<std::string> released;
  EXPECT_EQ(run(stops, {"Hello", " there\nU", "se", "r: more"}, &released), "Hello there");
  EXPECT_TRUE(stops.stopped());
  EXPECT_EQ(released[1], " there");  // "\nU" is held: it may begin the stop string
  EXPECT_EQ(released[2], "");
  EXPECT_EQ(released[3], "");
}

TEST(StopStrings, ReleasesHeldTextOnceItCannotMatch) {
  StopStrings stops({"\nUser:"});
  std::vector<std::string> released;
  EXPECT_EQ(run(stops, {"a\nUs", "ually"}, &released), "a\nUsually");
  EXPECT_FALSE(stops.stopped());
  EXPECT_EQ(released[0], "a");
  EXPECT_EQ(released[1], "\nUsually");
}

TEST(StopStrings, FirstOfSeveralStopsWinsAndFlushReleasesTheTail) {
  StopStrings stops({"END", "xy"});
  EXPECT_EQ(run(stops, {"abcx", "yzEND"}), "abc");
  StopStrings none({"END"});
  EXPECT_EQ(run(none, {"aE", "N"}), "aEN");  // held "EN" is flushed at the end
  StopStrings unicode({"\xe2\x80\x94"});  // an em dash
  EXPECT_EQ(run(unicode, {"caf\xc3\xa9 ", "\xe2\x80", "\x94 x"}), "caf\xc3\xa9 ");
}

TEST(StopStrings, AMatchInsideOnePieceKeepsTheTextBeforeIt) {
  StopStrings stops({"\n\n"});
  EXPECT_EQ(run(stops, {"one two\n\nthree"}), "one two");
}

}  // namespace
