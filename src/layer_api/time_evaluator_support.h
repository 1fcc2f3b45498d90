// Helpers of the time evaluator that the graph layer's debug executor shares.
#pragma once

#include <string>
#include <vector>

#include "graphrt/time_evaluator.h"

namespace graphrt {

// Throws an Error naming the first bad field.
void check_timing_options(const TimingOptions& options);
// The values as native-endian doubles, the blob TVM's Python side unpacks.
std::string pack_doubles(const std::vector<double>& values);

}  // namespace graphrt
