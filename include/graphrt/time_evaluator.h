// Repeated timing of a call under TVM's time_evaluator rules, shared by
// `runtime.RPCTimeEvaluator` and the graph executor's per-node timing.
#pragma once

#include "graphrt/export.h"

#include <dlpack/dlpack.h>

#include <functional>
#include <string>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

struct TimingOptions {
  int number = 10;          // calls per repeat (grown to reach min_repeat_ms)
  int repeat = 1;           // results returned
  int min_repeat_ms = 0;    // a repeat shorter than this is redone with more calls
  int limit_zero_time_iterations = 100;  // give up growing after this many 0 ns repeats
  int cooldown_interval_ms = 0;          // sleep after every repeats_to_cooldown repeats
  int repeats_to_cooldown = 1;
  int64_t cache_flush_bytes = 0;         // bytes copied before each repeat to evict caches
};


// Seconds per call of `body`, one value per repeat, after one untimed warm-up
// call. `device` is synchronised around each timed batch. `before_repeat`
// (may be empty) runs untimed before every repeat.
std::vector<double> time_repeats(const std::function<void()>& body, DLDevice device, const TimingOptions& options,
                                 const std::function<void()>& before_repeat = {});


}  // namespace graphrt
#pragma GCC visibility pop
