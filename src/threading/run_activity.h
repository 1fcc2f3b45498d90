// Which threads run executors: inside a ThreadPoolRunScope now, or out of one
// for less than kRunActivityLingerNs after a run that overlapped another
// thread's. The thread pool sizes launches by it.
//
// A thread that runs an executor in a loop is out of run() for a few
// microseconds between runs (its caller's code, Python and the GIL). Counted
// only while inside, such a thread let another executor's launch claim a
// worker in that gap: the worker woke, found the next run back on its core
// and competed with both runs for the two cores.
#pragma once

#include <cstdint>

namespace graphrt {

constexpr std::int64_t kRunActivityLingerNs = 100 * 1000;

// Threads inside a ThreadPoolRunScope now.
int run_activity_inside();
// Threads inside a scope now, or out of one for less than the linger after a
// run that overlapped another thread's, not counting the calling thread. Beyond 16 live threads that have run
// executors, threads share slots and the count can be low.
int run_activity_busy_others();
// The same, counting the calling thread too.
int run_activity_busy();

}  // namespace graphrt
