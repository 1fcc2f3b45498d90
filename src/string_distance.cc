#include "layer_api/string_distance.h"

#include <algorithm>
#include <cstdint>

#include "graphrt/error.h"

namespace graphrt {

namespace {
constexpr size_t kLongestComparedName = 1024;
}  // namespace

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest_matches(const std::string& name, const std::vector<std::string>& candidates, size_t limit) {
  std::vector<std::pair<size_t, std::string>> scored;
  size_t threshold = std::max<size_t>(3, name.size() / 3);
  for (const std::string& c : candidates) {
    // The distance costs the product of the lengths: names longer than any real one (read from
    // a hostile file) are only compared by containment.
    const bool long_names = name.size() > kLongestComparedName || c.size() > kLongestComparedName;
    size_t d = long_names ? SIZE_MAX : edit_distance(name, c);
    bool contains = !name.empty() && (c.find(name) != std::string::npos || name.find(c) != std::string::npos);
    if (d <= threshold || contains) scored.emplace_back(d, c);
  }
  std::sort(scored.begin(), scored.end());
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  std::string out;
  for (size_t i = 0; i < scored.size() && i < limit; ++i) out += (i ? ", " : "") + shown_name(scored[i].second);
  return out;
}

}  // namespace graphrt
