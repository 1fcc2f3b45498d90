#include "llm/generation/stop_strings.h"

#include <algorithm>

namespace graphrt {

StopStrings::StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {
  stops_.erase(std::remove(stops_.begin(), stops_.end(), std::string()), stops_.end());
}

std::string StopStrings::push(std::string_view text) {
  if (stopped_) return "";
  held_.append(text);
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, held_.find(stop));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string released = held_.substr(0, first);
    held_.clear();
    return released;
  }
  const size_t keep = partial_match_length();
  std::string released = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return released;
}

std::string StopStrings::flush() {
  std::string released;
  if (!stopped_) released.swap(held_);
  held_.clear();
  return released;
}

size_t StopStrings::partial_match_length() const {
  size_t longest = 0;
  for (const std::string& stop : stops_) {
    const size_t most = std::min(held_.size(), stop.size() - 1);
    for (size_t n = most; n > longest; --n) {
      if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

}  // namespace graphrt
