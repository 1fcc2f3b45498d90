// The text table of a profiled Relax call: one row per callee (kernel,
// builtin or VM function) with its calls, total and mean time and share of
// the whole call, the costliest first.
#pragma once

#include <string>

#include "modules/relax/interpreter.h"

namespace graphrt {
namespace relax {

// `total_seconds` is the whole call's wall time (the percentages' base).
std::string profile_table(const VirtualMachine& vm, double total_seconds);

}  // namespace relax
}  // namespace graphrt
