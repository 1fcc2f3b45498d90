// The persistent thread pool behind TVMBackendParallelLaunch.
//
// Sized by TVM_NUM_THREADS, else OMP_NUM_THREADS, else the number of cores.
// The calling thread runs task 0 and claims the workers that are idle, so
// launches from several threads run at once instead of queueing; the kernel
// splits its work by the num_task it is given: one task per thread, or, for
// long kernels that allow it, several that the threads take in turn
// (parallel_split.h). Tasks that no worker has
// started by the time task 0 is done are run by the calling thread. Workers
// spin briefly then sleep (at once while executors' runs hold every core), so
// a launch right after another one costs no system call.
#pragma once

#include "graphrt/tvm_abi.h"
#include "layer_api/thread_pool_run_scope.h"

namespace graphrt {

int thread_pool_max_concurrency();
// Threads inside a ThreadPoolRunScope now (an executor's run, profile or node timing).
int thread_pool_active_runs();
// Rebuilds the pool with `n` threads (n <= 0: back to the environment default).
// Safe while other threads launch: running launches finish on the old pool.
void thread_pool_set_max_concurrency(int n);
// TVMBackendParallelLaunch semantics; returns 0 or -1 with the last error set.
int thread_pool_launch(FTVMParallelLambda flambda, void* cdata, int num_task);
int thread_pool_barrier(int task_id, TVMParallelGroupEnv* penv);

}  // namespace graphrt
