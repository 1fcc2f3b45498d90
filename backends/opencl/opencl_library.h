// The OpenCL API, resolved at run time.
//
// graphrt has no link-time OpenCL dependency: the ICD loader (libOpenCL.so.1)
// is dlopen'ed on first use and each entry point fetched with dlsym. The few
// types and values used are declared here (they are the OpenCL 1.2 ABI, which
// every later version keeps), so the back end builds without the Khronos
// headers (named kCl... here, since the headers define the CL_ names as macros);
// tests/backends/opencl checks them against the headers where present.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace graphrt {
namespace opencl_backend {

// --- API types (opaque handles, integer enums).
using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using cl_bool = cl_uint;
using cl_bitfield = cl_ulong;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;
using cl_context_properties = intptr_t;

struct cl_buffer_region {
  size_t origin;
  size_t size;
};

constexpr cl_int kClSuccess = 0;
constexpr cl_int kClDeviceNotFound = -1;
constexpr cl_int kClMemObjectAllocationFailure = -4;
constexpr cl_int kClOutOfResources = -5;
constexpr cl_int kClOutOfHostMemory = -6;
constexpr cl_int kClBuildProgramFailure = -11;
constexpr cl_int kClPlatformNotFoundKhr = -1001;
constexpr cl_bool kClTrue = 1;
constexpr cl_bitfield kClDeviceTypeCpu = 1 << 1;
constexpr cl_bitfield kClDeviceTypeGpu = 1 << 2;
constexpr cl_bitfield kClDeviceTypeAccelerator = 1 << 3;
constexpr cl_bitfield kClDeviceTypeAll = 0xFFFFFFFF;
constexpr cl_uint kClPlatformName = 0x0902;
constexpr cl_uint kClDeviceType = 0x1000;
constexpr cl_uint kClDeviceMaxWorkGroupSize = 0x1004;
constexpr cl_uint kClDeviceMemBaseAddrAlign = 0x1019;
constexpr cl_uint kClDeviceName = 0x102B;
constexpr cl_uint kClDeviceVersion = 0x102F;
constexpr cl_bitfield kClMemReadWrite = 1 << 0;
constexpr cl_uint kClBufferCreateTypeRegion = 0x1220;
constexpr cl_uint kClProgramBuildLog = 0x1183;
constexpr cl_uint kClKernelNumArgs = 0x1191;
constexpr cl_context_properties kClContextPlatform = 0x1084;

// X-macro list: (name, return type, parameter list).
#define GRAPHRT_OPENCL_SYMBOLS(X)                                                                            \
  X(clGetPlatformIDs, cl_int, cl_uint, cl_platform_id*, cl_uint*)                                            \
  X(clGetPlatformInfo, cl_int, cl_platform_id, cl_uint, size_t, void*, size_t*)                              \
  X(clGetDeviceIDs, cl_int, cl_platform_id, cl_bitfield, cl_uint, cl_device_id*, cl_uint*)                   \
  X(clGetDeviceInfo, cl_int, cl_device_id, cl_uint, size_t, void*, size_t*)                                  \
  X(clCreateContext, cl_context, const cl_context_properties*, cl_uint, const cl_device_id*,                 \
    void (*)(const char*, const void*, size_t, void*), void*, cl_int*)                                       \
  X(clReleaseContext, cl_int, cl_context)                                                                    \
  X(clCreateCommandQueue, cl_command_queue, cl_context, cl_device_id, cl_bitfield, cl_int*)                  \
  X(clReleaseCommandQueue, cl_int, cl_command_queue)                                                         \
  X(clFinish, cl_int, cl_command_queue)                                                                      \
  X(clFlush, cl_int, cl_command_queue)                                                                       \
  X(clCreateBuffer, cl_mem, cl_context, cl_bitfield, size_t, void*, cl_int*)                                 \
  X(clCreateSubBuffer, cl_mem, cl_mem, cl_bitfield, cl_uint, const void*, cl_int*)                           \
  X(clReleaseMemObject, cl_int, cl_mem)                                                                      \
  X(clEnqueueReadBuffer, cl_int, cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint,          \
    const cl_event*, cl_event*)                                                                              \
  X(clEnqueueWriteBuffer, cl_int, cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint,   \
    const cl_event*, cl_event*)                                                                              \
  X(clEnqueueCopyBuffer, cl_int, cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,          \
    const cl_event*, cl_event*)                                                                              \
  X(clCreateProgramWithSource, cl_program, cl_context, cl_uint, const char**, const size_t*, cl_int*)        \
  X(clBuildProgram, cl_int, cl_program, cl_uint, const cl_device_id*, const char*,                           \
    void (*)(cl_program, void*), void*)                                                                      \
  X(clGetProgramBuildInfo, cl_int, cl_program, cl_device_id, cl_uint, size_t, void*, size_t*)                \
  X(clReleaseProgram, cl_int, cl_program)                                                                    \
  X(clCreateKernel, cl_kernel, cl_program, const char*, cl_int*)                                             \
  X(clReleaseKernel, cl_int, cl_kernel)                                                                      \
  X(clGetKernelInfo, cl_int, cl_kernel, cl_uint, size_t, void*, size_t*)                                     \
  X(clSetKernelArg, cl_int, cl_kernel, cl_uint, size_t, const void*)                                         \
  X(clEnqueueNDRangeKernel, cl_int, cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,      \
    const size_t*, cl_uint, const cl_event*, cl_event*)

// The resolved API. Made by load(); when `error` is non-empty the function
// pointers must not be used.
struct OpenclLibrary {
#define GRAPHRT_OPENCL_DECLARE_FIELD(name, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  GRAPHRT_OPENCL_SYMBOLS(GRAPHRT_OPENCL_DECLARE_FIELD)
#undef GRAPHRT_OPENCL_DECLARE_FIELD

  std::string path;   // the library that was opened
  std::string error;  // why the API cannot be used ("" when it can)

  bool ok() const { return error.empty(); }

  // Opens `path` (dlopen RTLD_NOW|RTLD_LOCAL) and resolves the table. Never
  // throws: failures land in `error` ("libOpenCL.so.1 not found: ..."). The
  // library stays loaded for the process: drivers do not survive an unload.
  static OpenclLibrary load(const std::string& path);
};

// The library an OpenCL device API opens: $GRAPHRT_OPENCL_LIBRARY when set,
// else "libOpenCL.so.1" (the ICD loader).
std::string default_library_path();
// "CL_INVALID_VALUE (-30)" for an OpenCL status code.
std::string describe_status(cl_int status);

}  // namespace opencl_backend
}  // namespace graphrt
