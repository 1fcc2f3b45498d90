/* A stand-in for libcuda.so.1 that runs on the host: memory is malloc'ed,
 * copies are memcpy, kernels are only counted. It exports no
 * cuGetProcAddress, so graphrt resolves every entry point through its dlsym
 * fallback. Used by cuda_fake_driver_test to drive the whole launch path
 * (contexts, pool, copies, kernel packing, graph capture) without a GPU. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

struct fake_stats {
  int launches, captured_launches, graph_launches, module_loads, ctx_sets, allocs, frees;
  unsigned grid[3], block[3], smem;
  int capturing;
};
struct fake_stats fake_cuda_stats;

static char fake_ctx, fake_module, fake_function, fake_graph, fake_exec;

CUresult cuGetErrorName(CUresult r, const char** s) { (void)r; *s = "FAKE_ERROR"; return 0; }
CUresult cuGetErrorString(CUresult r, const char** s) { (void)r; *s = "fake error"; return 0; }
CUresult cuDriverGetVersion(int* v) { *v = 12040; return 0; }
CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return 0; }
CUresult cuDeviceGet(int* d, int i) { *d = i; return i == 0 ? 0 : 101; }
CUresult cuDeviceGetName(char* s, int n, int d) { (void)d; strncpy(s, "fake", n); return 0; }
CUresult cuDeviceGetAttribute(int* v, int a, int d) { (void)a; (void)d; *v = 9; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { (void)d; *c = &fake_ctx; return 0; }
CUresult cuCtxSetCurrent(void* c) { (void)c; fake_cuda_stats.ctx_sets++; return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  fake_cuda_stats.allocs++;
  *p = (CUdeviceptr)(uintptr_t)calloc(1, n);
  return *p ? 0 : 2;
}
CUresult cuMemFree_v2(CUdeviceptr p) { fake_cuda_stats.frees++; free((void*)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, void* st) { (void)st; memcpy((void*)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, void* st) { (void)st; memcpy(d, (void*)(uintptr_t)s, n); return 0; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void* st) { (void)st; memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n); return 0; }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void* st) {
  (void)st;
  for (size_t i = 0; i < n; ++i) ((unsigned*)(uintptr_t)d)[i] = v;
  return 0;
}
CUresult cuStreamCreate(void** s, unsigned f) { (void)f; *s = malloc(1); return 0; }
CUresult cuStreamDestroy_v2(void* s) { free(s); return 0; }
CUresult cuStreamSynchronize(void* s) { (void)s; return 0; }
CUresult cuModuleLoadData(void** m, const void* image) { (void)image; fake_cuda_stats.module_loads++; *m = &fake_module; return 0; }
CUresult cuModuleUnload(void* m) { (void)m; return 0; }
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { (void)m; (void)name; *f = &fake_function; return 0; }
CUresult cuModuleGetGlobal_v2(CUdeviceptr* p, size_t* n, void* m, const char* name) { (void)p; (void)n; (void)m; (void)name; return 500; }
CUresult cuFuncSetAttribute(void* f, int a, int v) { (void)f; (void)a; (void)v; return 0; }
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void* stream, void** params, void** extra) {
  (void)f; (void)stream; (void)extra;
  if (!params) return 1;
  if (fake_cuda_stats.capturing) fake_cuda_stats.captured_launches++;
  else fake_cuda_stats.launches++;
  fake_cuda_stats.grid[0] = gx; fake_cuda_stats.grid[1] = gy; fake_cuda_stats.grid[2] = gz;
  fake_cuda_stats.block[0] = bx; fake_cuda_stats.block[1] = by; fake_cuda_stats.block[2] = bz;
  fake_cuda_stats.smem = smem;
  return 0;
}
CUresult cuStreamBeginCapture_v2(void* s, int mode) { (void)mode; if (!s) return 1; fake_cuda_stats.capturing = 1; return 0; }
CUresult cuStreamEndCapture(void* s, void** g) { (void)s; fake_cuda_stats.capturing = 0; *g = &fake_graph; return 0; }
CUresult cuGraphInstantiateWithFlags(void** e, void* g, unsigned long long f) { (void)g; (void)f; *e = &fake_exec; return 0; }
CUresult cuGraphLaunch(void* e, void* s) { (void)e; if (!s) return 1; fake_cuda_stats.graph_launches++; return 0; }
CUresult cuGraphExecDestroy(void* e) { (void)e; return 0; }
CUresult cuGraphDestroy(void* g) { (void)g; return 0; }
