// "Did you mean" hints for missing names.
#pragma once

#include <string>
#include <vector>

namespace graphrt {

size_t edit_distance(const std::string& a, const std::string& b);
// Up to `limit` candidates closest to `name`, comma separated ("" if none is close).
std::string closest_matches(const std::string& name, const std::vector<std::string>& candidates, size_t limit);

}  // namespace graphrt
