// Which parallel launches may give their kernel more tasks than the launch
// has threads, so that the threads share the work by taking tasks in turn.
//
// TVM's generated kernels cut their parallel loop into num_task equal chunks.
// With one chunk per thread, a thread that loses its core for a moment (to
// another program, the hypervisor) makes the whole launch wait for it, and
// uneven chunks leave a core idle. With several chunks per thread the others
// take over the late thread's remaining chunks.
//
// Only kernels known to allow it are split: code inside the ranges allowed
// here. The module system allows the code runs of a library made by TVM that
// never calls TVMBackendParallelBarrier (a barrier waits for every task at
// once, which more tasks than threads could never reach), read from the
// library's facts at load (split_launch_code, library_module.h). Anything
// else, hand-written lambdas included, gets one task per thread as in TVM's
// runtime. Each
// lambda's first launch is not split: its duration decides how finely later
// launches are, so that short kernels are never split at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graphrt/tvm_abi.h"

namespace graphrt {

// Addresses of code: [start, start + bytes).
struct CodeRange {
  std::uintptr_t start;
  std::size_t bytes;
};

// Kernels shorter than this per thread are not split.
constexpr std::int64_t kSplitMinTaskNs = 8 * 1000;
constexpr int kSplitMaxTasksPerThread = 8;

// Lets launches of kernels inside `code` be split, under `owner` (any
// address that names them until `forget`). `forget` before the code goes
// away; launches already planned are not affected.
void parallel_split_allow_code(const void* owner, std::vector<CodeRange> code);
void parallel_split_forget_code(const void* owner);

// Tasks a launch of `flambda` on `threads` threads gives the kernel: `threads`,
// or a multiple of it. `entry` is where the launch's duration goes
// (parallel_split_record), or null when it need not be measured.
struct ParallelSplit {
  int tasks;
  void* entry;
};
ParallelSplit parallel_split_plan(FTVMParallelLambda flambda, int threads);
void parallel_split_record(void* entry, std::int64_t launch_ns);

// How many of the launches so far were split (for tests).
std::uint64_t parallel_split_launches();

}  // namespace graphrt
