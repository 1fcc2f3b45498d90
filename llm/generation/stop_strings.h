// Stop strings over generated text: text is held while it may be the start of a stop string
// and released once it cannot be; on a match, only the text before it is released. Works on
// whole UTF-8 characters: released text is cut at a stop string's first byte, a character's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace graphrt {

class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops);

  // Appends generated text; returns what may be emitted now. After a match, stopped() is true
  // and nothing more is released.
  std::string push(std::string_view text);
  // The held text, at the end of a generation that did not stop on a string.
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  // The length of the longest suffix of held_ that is a proper prefix of a stop string.
  size_t partial_match_length() const;

  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace graphrt
