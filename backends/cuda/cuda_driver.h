// The CUDA driver API, resolved at run time.
//
// graphrt has no link-time CUDA dependency: libcuda.so.1 is dlopen'ed on first
// use and every entry point is fetched through cuGetProcAddress (dlsym of the
// versioned symbol as the fallback). The few driver types and enum values we
// need are declared here rather than taken from the toolkit's cuda.h, so the
// back end builds the same with or without a CUDA toolkit (the values below
// are part of the driver's stable ABI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace graphrt {
namespace cuda_backend {

// --- Driver ABI types (opaque handles, enums as ints).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUevent = struct CUevent_st*;
using CUgraphNode = struct CUgraphNode_st*;

// A kernel node's launch, as cuGraphExecKernelNodeSetParams takes it (the
// layout of ABI version 11.4; CUDA 12's _v2 adds fields after these).
struct CudaKernelNodeParams {
  CUfunction func;
  unsigned grid_x, grid_y, grid_z;
  unsigned block_x, block_y, block_z;
  unsigned shared_mem_bytes;
  void** kernel_params;
  void** extra;
};

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
// Pinned host memory usable from every context, not only the current one.
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x01;
constexpr int CU_STREAM_DEFAULT = 0;  // synchronises with the legacy default stream
constexpr int CU_STREAM_NON_BLOCKING = 1;  // no implicit synchronisation with the legacy stream
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr int CU_STREAM_CAPTURE_MODE_RELAXED = 2;
constexpr int CU_STREAM_CAPTURE_STATUS_ACTIVE = 1;
// cuGetProcAddress flag: the entry points with the legacy default stream's
// semantics (graphrt's null stream), whatever the driver's default would be.
constexpr unsigned long long CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

// The driver ABI version requested from cuGetProcAddress (1000*major +
// 10*minor) and the oldest driver accepted: CUDA 11.4, the first with
// cuGraphInstantiateWithFlags. Every entry below has this version's signature.
constexpr int kCudaApiVersion = 11040;
constexpr int kCudaMinDriverVersion = 11040;

// X-macro list: (base name, dlsym fallback name, return-less parameter list).
// The base name is what cuGetProcAddress expects; the fallback is the exported
// symbol carrying the same ABI.
#define GRAPHRT_CUDA_SYMBOLS(X)                                                                       \
  X(cuGetErrorName, "cuGetErrorName", CUresult, const char**)                                         \
  X(cuGetErrorString, "cuGetErrorString", CUresult, const char**)                                     \
  X(cuDriverGetVersion, "cuDriverGetVersion", int*)                                                   \
  X(cuInit, "cuInit", unsigned)                                                                       \
  X(cuDeviceGetCount, "cuDeviceGetCount", int*)                                                       \
  X(cuDeviceGet, "cuDeviceGet", CUdevice*, int)                                                       \
  X(cuDeviceGetName, "cuDeviceGetName", char*, int, CUdevice)                                         \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", int*, int, CUdevice)                                \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUcontext*, CUdevice)                       \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUcontext)                                                    \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", CUcontext*)                                                   \
  X(cuMemAlloc, "cuMemAlloc_v2", CUdeviceptr*, size_t)                                                \
  X(cuMemFree, "cuMemFree_v2", CUdeviceptr)                                                           \
  X(cuMemHostAlloc, "cuMemHostAlloc", void**, size_t, unsigned)                                       \
  X(cuMemFreeHost, "cuMemFreeHost", void*)                                                            \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUdeviceptr, const void*, size_t, CUstream)            \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", void*, CUdeviceptr, size_t, CUstream)                  \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUdeviceptr, CUdeviceptr, size_t, CUstream)            \
  X(cuMemsetD32Async, "cuMemsetD32Async", CUdeviceptr, unsigned, size_t, CUstream)                    \
  X(cuStreamCreate, "cuStreamCreate", CUstream*, unsigned)                                            \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUstream)                                                  \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUstream)                                             \
  X(cuEventCreate, "cuEventCreate", CUevent*, unsigned)                                               \
  X(cuEventRecord, "cuEventRecord", CUevent, CUstream)                                                \
  X(cuEventDestroy, "cuEventDestroy_v2", CUevent)                                                     \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", CUstream, CUevent, unsigned)                              \
  X(cuModuleLoadData, "cuModuleLoadData", CUmodule*, const void*)                                     \
  X(cuModuleUnload, "cuModuleUnload", CUmodule)                                                       \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUfunction*, CUmodule, const char*)                   \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2", CUdeviceptr*, size_t*, CUmodule, const char*)          \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUfunction, int, int)                                   \
  X(cuLaunchKernel, "cuLaunchKernel", CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,   \
    unsigned, unsigned, CUstream, void**, void**)                                                     \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", CUstream, int)                                   \
  X(cuStreamEndCapture, "cuStreamEndCapture", CUstream, CUgraph*)                                     \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", CUgraphExec*, CUgraph,                \
    unsigned long long)                                                                               \
  X(cuGraphLaunch, "cuGraphLaunch", CUgraphExec, CUstream)                                            \
  X(cuStreamGetCaptureInfo, "cuStreamGetCaptureInfo_v2", CUstream, int*, unsigned long long*, CUgraph*, \
    const CUgraphNode**, size_t*)                                                                     \
  X(cuGraphGetNodes, "cuGraphGetNodes", CUgraph, CUgraphNode*, size_t*)                               \
  X(cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams", CUgraphExec, CUgraphNode,       \
    const CudaKernelNodeParams*)                                                                      \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", CUgraphExec)                                            \
  X(cuGraphDestroy, "cuGraphDestroy", CUgraph)

// The resolved driver. Construct with load(); when `error` is non-empty the
// function pointers must not be used.
struct CudaDriver {
#define GRAPHRT_CUDA_DECLARE_FIELD(name, fallback, ...) CUresult (*name)(__VA_ARGS__) = nullptr;
  GRAPHRT_CUDA_SYMBOLS(GRAPHRT_CUDA_DECLARE_FIELD)
#undef GRAPHRT_CUDA_DECLARE_FIELD

  std::string path;    // the library that was opened
  std::string error;   // why the driver cannot be used ("" when it can)
  int version = 0;     // cuDriverGetVersion
  void* handle = nullptr;

  bool ok() const { return error.empty(); }
  // "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
  std::string describe(CUresult r) const;

  // Opens `path` (dlopen RTLD_NOW|RTLD_LOCAL), resolves the symbol table,
  // checks the driver version. Never throws: failures land in `error`,
  // e.g. "libcuda.so.1 not found: <dlerror>" or "CUDA driver 11.0 is older
  // than the minimum 11.4". The library stays loaded for the process.
  static CudaDriver load(const std::string& path);
};

// The library path a CUDA device API opens by default: $GRAPHRT_CUDA_DRIVER when
// set, else "libcuda.so.1".
std::string default_driver_path();
// "11.4" for 11040.
std::string format_driver_version(int version);

}  // namespace cuda_backend
}  // namespace graphrt
