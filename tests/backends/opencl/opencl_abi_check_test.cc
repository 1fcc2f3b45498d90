// The OpenCL types and values opencl_library.h declares, against the Khronos
// headers where they are installed (the build itself needs none).
#include <gtest/gtest.h>

#if __has_include(<CL/cl.h>)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#define GRAPHRT_HAVE_CL_HEADERS 1
#endif

#include "backends/opencl/opencl_library.h"

namespace ocl = graphrt::opencl_backend;

TEST(OpenclAbi, DeclaredValuesAreTheHeadersOnes) {
#ifndef GRAPHRT_HAVE_CL_HEADERS
  GTEST_SKIP() << "the Khronos OpenCL headers are not installed";
#else
  static_assert(sizeof(ocl::cl_int) == sizeof(::cl_int) && sizeof(ocl::cl_bitfield) == sizeof(::cl_bitfield), "");
  static_assert(sizeof(ocl::cl_buffer_region) == sizeof(::cl_buffer_region), "");
  static_assert(sizeof(ocl::cl_context_properties) == sizeof(::cl_context_properties), "");
  static_assert(ocl::kClSuccess == CL_SUCCESS && ocl::kClDeviceNotFound == CL_DEVICE_NOT_FOUND, "");
  static_assert(ocl::kClMemObjectAllocationFailure == CL_MEM_OBJECT_ALLOCATION_FAILURE, "");
  static_assert(ocl::kClOutOfResources == CL_OUT_OF_RESOURCES && ocl::kClOutOfHostMemory == CL_OUT_OF_HOST_MEMORY, "");
  static_assert(ocl::kClBuildProgramFailure == CL_BUILD_PROGRAM_FAILURE && ocl::kClTrue == CL_TRUE, "");
  static_assert(ocl::kClDeviceTypeCpu == CL_DEVICE_TYPE_CPU && ocl::kClDeviceTypeGpu == CL_DEVICE_TYPE_GPU, "");
  static_assert(ocl::kClDeviceTypeAccelerator == CL_DEVICE_TYPE_ACCELERATOR, "");
  static_assert(ocl::kClDeviceTypeAll == CL_DEVICE_TYPE_ALL && ocl::kClPlatformName == CL_PLATFORM_NAME, "");
  static_assert(ocl::kClDeviceType == CL_DEVICE_TYPE && ocl::kClDeviceName == CL_DEVICE_NAME, "");
  static_assert(ocl::kClDeviceMaxWorkGroupSize == CL_DEVICE_MAX_WORK_GROUP_SIZE, "");
  static_assert(ocl::kClDeviceMemBaseAddrAlign == CL_DEVICE_MEM_BASE_ADDR_ALIGN, "");
  static_assert(ocl::kClDeviceVersion == CL_DEVICE_VERSION && ocl::kClMemReadWrite == CL_MEM_READ_WRITE, "");
  static_assert(ocl::kClBufferCreateTypeRegion == CL_BUFFER_CREATE_TYPE_REGION, "");
  static_assert(ocl::kClProgramBuildLog == CL_PROGRAM_BUILD_LOG && ocl::kClKernelNumArgs == CL_KERNEL_NUM_ARGS, "");
  static_assert(ocl::kClContextPlatform == CL_CONTEXT_PLATFORM, "");
  EXPECT_EQ(ocl::describe_status(CL_INVALID_KERNEL_ARGS), "CL_INVALID_KERNEL_ARGS (-52)");
#endif
}
