/* An OpenCL interposer for measurements: counts the host<->device transfers and kernel launches a
 * process queues, and forwards every call to the real ICD loader (libOpenCL.so.1, which this
 * library links, so that a lookup through its handle finds every other entry point there).
 *
 * TVM's runtime links libOpenCL: LD_PRELOAD this library. graphrt opens the API by name: set
 * GRAPHRT_OPENCL_LIBRARY to this library too (with LD_PRELOAD, both reach the one copy).
 * The counts: opencl_transfer_counts(out[8]) fills writes (host to device), bytes written, reads
 * (device to host), bytes read, device-to-device copies, bytes copied, kernel launches, clFinish
 * calls; opencl_transfer_counts_reset() zeroes them. bench/mlc_device_bench.py and
 * opencl_language_model_test read them. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kWrites, kWriteBytes, kReads, kReadBytes, kCopies, kCopyBytes, kLaunches, kFinishes, kCounts };
static _Atomic uint64_t counts[kCounts];

__attribute__((visibility("default"))) void opencl_transfer_counts(uint64_t out[kCounts]) {
  for (int i = 0; i < kCounts; ++i) out[i] = atomic_load(&counts[i]);
}

__attribute__((visibility("default"))) void opencl_transfer_counts_reset(void) {
  for (int i = 0; i < kCounts; ++i) atomic_store(&counts[i], 0);
}

/* The loader's own entry point `name` (never this library's). */
static void* real(const char* name) {
  static void* loader;
  if (!loader) loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
  void* f = loader ? dlsym(loader, name) : NULL;
  if (!f) {
    fprintf(stderr, "opencl_transfer_counter: no %s in libOpenCL.so.1\n", name);
    abort();
  }
  return f;
}

#define FORWARD(type, name, params) \
  static type(*next_##name) params; \
  if (!next_##name) next_##name = (type(*) params)real(#name)

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                                     size_t offset, size_t size, const void* ptr, cl_uint n,
                                                     const cl_event* wait, cl_event* event) {
  FORWARD(cl_int, clEnqueueWriteBuffer,
          (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint, const cl_event*, cl_event*));
  atomic_fetch_add(&counts[kWrites], 1);
  atomic_fetch_add(&counts[kWriteBytes], size);
  return next_clEnqueueWriteBuffer(q, buffer, blocking, offset, size, ptr, n, wait, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                                                    size_t offset, size_t size, void* ptr, cl_uint n,
                                                    const cl_event* wait, cl_event* event) {
  FORWARD(cl_int, clEnqueueReadBuffer,
          (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint, const cl_event*, cl_event*));
  atomic_fetch_add(&counts[kReads], 1);
  atomic_fetch_add(&counts[kReadBytes], size);
  return next_clEnqueueReadBuffer(q, buffer, blocking, offset, size, ptr, n, wait, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                                    size_t dst_offset, size_t size, cl_uint n, const cl_event* wait,
                                                    cl_event* event) {
  FORWARD(cl_int, clEnqueueCopyBuffer,
          (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event*, cl_event*));
  atomic_fetch_add(&counts[kCopies], 1);
  atomic_fetch_add(&counts[kCopyBytes], size);
  return next_clEnqueueCopyBuffer(q, src, dst, src_offset, dst_offset, size, n, wait, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel kernel, cl_uint dims,
                                                       const size_t* offset, const size_t* global,
                                                       const size_t* local, cl_uint n, const cl_event* wait,
                                                       cl_event* event) {
  FORWARD(cl_int, clEnqueueNDRangeKernel, (cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                                           const size_t*, cl_uint, const cl_event*, cl_event*));
  atomic_fetch_add(&counts[kLaunches], 1);
  return next_clEnqueueNDRangeKernel(q, kernel, dims, offset, global, local, n, wait, event);
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue q) {
  FORWARD(cl_int, clFinish, (cl_command_queue));
  atomic_fetch_add(&counts[kFinishes], 1);
  return next_clFinish(q);
}
