/* A TVM-style kernel library whose one function runs a parallel loop through
 * the runtime, as TVM's generated code does: the runtime fills the
 * context-function slots (__TVMBackendParallelLaunch, ...) when it loads the
 * library. Built three ways (parallel_split_test.cc):
 *   default                  no barrier
 *   BARRIER_THROUGH_SLOT     calls the barrier through __TVMBackendParallelBarrier (LLVM codegen)
 *   BARRIER_BY_NAME          calls TVMBackendParallelBarrier by name (C codegen)
 *
 *   record_tasks(counts):  counts is int32[65]; the kernel stores num_task in
 *   counts[0] and adds 1 to counts[1 + task_id] for each task run. The work
 *   (a fixed number of iterations in all, cut into num_task chunks as TVM
 *   cuts a parallel loop) takes about a millisecond, so the runtime may split it.
 */
#include <graphrt/tvm_abi.h>

#define EXPORT __attribute__((visibility("default")))
#define TOTAL_ITERATIONS 2000000

EXPORT void* __tvm_module_ctx = 0;
EXPORT int (*__TVMBackendParallelLaunch)(FTVMParallelLambda, void*, int) = 0;
#if defined(BARRIER_THROUGH_SLOT)
EXPORT int (*__TVMBackendParallelBarrier)(int, TVMParallelGroupEnv*) = 0;
#define CALL_BARRIER(task_id, penv) __TVMBackendParallelBarrier(task_id, penv)
#elif defined(BARRIER_BY_NAME)
#define CALL_BARRIER(task_id, penv) TVMBackendParallelBarrier(task_id, penv)
#endif

static int run_chunk(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  int32_t* counts = (int32_t*)cdata;
  int chunk = (TOTAL_ITERATIONS + penv->num_task - 1) / penv->num_task;
  int begin = task_id * chunk;
  int end = begin + chunk < TOTAL_ITERATIONS ? begin + chunk : TOTAL_ITERATIONS;
  volatile int sink = 0;
  for (int i = begin; i < end; ++i) sink += i;
  (void)sink; /* clang counts a volatile store as no use */
  __atomic_store_n(&counts[0], penv->num_task, __ATOMIC_RELAXED);
  if (task_id < 64) __atomic_fetch_add(&counts[1 + task_id], 1, __ATOMIC_RELAXED);
#ifdef CALL_BARRIER
  /* Every task must have counted itself before any passes the barrier. */
  if (CALL_BARRIER(task_id, penv) != 0) return -1;
  int arrived = 0;
  for (int t = 0; t < penv->num_task && t < 64; ++t) arrived += __atomic_load_n(&counts[1 + t], __ATOMIC_RELAXED) > 0;
  if (arrived < penv->num_task) return -1;
#endif
  return 0;
}

EXPORT int record_tasks(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 1 || (codes[0] != kTVMDLTensorHandle && codes[0] != kTVMNDArrayHandle)) return -1;
  DLTensor* t = (DLTensor*)args[0].v_handle;
  if (t->ndim != 1 || t->shape[0] != 65 || t->dtype.code != kDLInt || t->dtype.bits != 32) return -1;
  int32_t* counts = (int32_t*)((char*)t->data + t->byte_offset);
  for (int i = 0; i < 65; ++i) counts[i] = 0;
  return __TVMBackendParallelLaunch(run_chunk, counts, 0);
}
