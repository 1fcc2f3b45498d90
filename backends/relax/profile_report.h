// What a profiled Relax call reports: the text table, one row per callee
// (kernel, builtin or VM function) with its calls, total and mean time and
// share of the whole call, the costliest first; and the Chrome trace.
#pragma once

#include <string>

#include "backends/relax/interpreter.h"

namespace graphrt {
namespace relax {

// `total_seconds` is the whole call's wall time (the percentages' base).
std::string profile_table(const VirtualMachine& vm, double total_seconds);
// The VM's trace events as a Chrome trace (chrome://tracing, Perfetto): one
// complete event per call, under one for the entry function `entry` that
// started at the trace's origin and took `total_us`.
std::string chrome_trace(const VirtualMachine& vm, int64_t entry, double total_us);

}  // namespace relax
}  // namespace graphrt
