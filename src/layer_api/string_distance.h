// "Did you mean" hints for missing names.
#pragma once

#include <string>
#include <vector>

#include "graphrt/user_mistakes.h"  // closest_matches, public for the apps' flag hints

namespace graphrt {

size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace graphrt
