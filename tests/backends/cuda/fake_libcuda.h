/* The state fake_libcuda.c records, shared by the fake and the tests that read
 * it (through dlsym of "fake_cuda_state" on the fake's handle). Plain C so the
 * fake stays a C library. */
#ifndef GRAPHRT_TESTS_FAKE_LIBCUDA_H_
#define GRAPHRT_TESTS_FAKE_LIBCUDA_H_

#include <stddef.h>

#define FAKE_CUDA_MAX_DEVICES 4
#define FAKE_CUDA_MAX_PARAMS 16
#define FAKE_CUDA_LOG_BYTES (1 << 16)

/* Driver error codes the fake returns, as the real driver numbers them. */
#define FAKE_CUDA_ERROR_INVALID_VALUE 1
#define FAKE_CUDA_ERROR_INVALID_CONTEXT 201
#define FAKE_CUDA_ERROR_INVALID_HANDLE 400
#define FAKE_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED 900
#define FAKE_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED 901
#define FAKE_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT 906

/* A kernel the fake runs on the host at each launch and graph replay (tests
 * define it with fake_cuda_define_kernel): its parameter sizes, which the
 * real driver reads from the image, and what it does. Kernels not defined
 * only get recorded, with the sizes in param_sizes. */
typedef void (*fake_cuda_kernel_fn)(void** params, const unsigned* grid, const unsigned* block);

struct fake_cuda_state {
  int device_count;
  int launches, captured_launches, graph_launches;
  int module_loads, module_unloads, ctx_sets;
  int allocs, frees, host_allocs, host_frees;
  unsigned host_alloc_flags;
  /* Work the real driver would refuse or get wrong. */
  int wrong_context;       /* a call with no context or another context current than its object's */
  int destroyed_stream;    /* a call on a stream already destroyed */
  int implicit_sync;       /* legacy-stream use while a blocking stream captured */
  /* The last launch. */
  unsigned grid[3], block[3], smem;
  int nparams;
  unsigned char params[FAKE_CUDA_MAX_PARAMS][8];
  /* Parameter sizes of the next launches (set by a test; 0: not recorded). */
  int param_sizes[FAKE_CUDA_MAX_PARAMS];
  /* cuFuncSetAttribute */
  int func_attr_calls, func_attr, func_attr_value;
  /* The last image given to cuModuleLoadData: its first bytes and whether a
   * PTX image (text) was NUL-terminated within its length. */
  char image_head[16];
  int image_ptx, image_ptx_terminated;
  /* Graph replays: kernel nodes run (or recorded) by cuGraphLaunch, and
   * cuGraphExecKernelNodeSetParams calls that succeeded. Set
   * refuse_node_updates to an error code to make them fail with it. */
  int replayed_kernels, node_updates, refuse_node_updates;
  /* Called once, outside the fake's lock, after the next launch that a
   * capture records (then cleared): lets a test act in the middle of a capture. */
  void (*on_captured_launch)(void);
  /* cuGetProcAddress (the variant that exports it). */
  int getproc_calls, getproc_non_legacy;
  unsigned long long getproc_flags;
  int getproc_version;
  /* Calls in order, space-separated ("launch:s2 sync:s0 ..."; s0 is the
   * legacy stream, sN the N-th stream created; eN the N-th event). */
  char log[FAKE_CUDA_LOG_BYTES];
  size_t log_len;
};

void fake_cuda_define_kernel(const char* name, int nparams, const int* param_sizes, fake_cuda_kernel_fn run);

#endif
