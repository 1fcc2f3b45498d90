// A deadline for the runs a thread makes: a graph executor checks it between nodes, the Relax
// VM before every Call instruction (a kernel, a builtin or a VM function) and every 4096
// instructions. A run past it stops there and throws ErrorKind::kInterrupted naming where. A
// kernel that has started is not interrupted (generated code has no cancellation point), so a
// run ends at most one kernel after its deadline.
#pragma once

#include "graphrt/export.h"

#include <chrono>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// Sets the calling thread's run deadline while it lives; the previous one (or none) comes back
// when it ends. A scope with a deadline later than the one in force keeps the earlier one.
class RunDeadlineScope {
 public:
  explicit RunDeadlineScope(std::chrono::steady_clock::time_point deadline);
  ~RunDeadlineScope();
  RunDeadlineScope(const RunDeadlineScope&) = delete;
  RunDeadlineScope& operator=(const RunDeadlineScope&) = delete;

 private:
  std::chrono::steady_clock::time_point previous_;
};

// True when the calling thread has a run deadline (a cheap check: no clock is read).
bool run_deadline_set();
// True when the calling thread's run deadline has passed (false without one).
bool run_deadline_passed();

}  // namespace graphrt
#pragma GCC visibility pop
