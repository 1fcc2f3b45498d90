#include "graphrt/run_deadline.h"

#include <algorithm>

namespace graphrt {

namespace {
using Clock = std::chrono::steady_clock;
thread_local Clock::time_point thread_deadline = Clock::time_point::max();
}  // namespace

RunDeadlineScope::RunDeadlineScope(Clock::time_point deadline) : previous_(thread_deadline) {
  thread_deadline = std::min(previous_, deadline);
}

RunDeadlineScope::~RunDeadlineScope() { thread_deadline = previous_; }

bool run_deadline_set() { return thread_deadline != Clock::time_point::max(); }

bool run_deadline_passed() { return run_deadline_set() && Clock::now() >= thread_deadline; }

}  // namespace graphrt
