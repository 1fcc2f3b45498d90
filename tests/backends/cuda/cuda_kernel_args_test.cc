// Scalar kernel arguments, dynamic shared memory and PTX images through the
// packed-function path, checked against what the fake driver received.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "backends/cuda/cuda_device_api.h"

using namespace graphrt;
using namespace graphrt::cuda_backend;
using cuda_fake::state;

namespace {
CudaModuleImage scalar_kernel_ptx() {
  CudaModuleImage image;
  image.fmt = "ptx";
  image.data = "// ptx\n.version 7.0\n.target sm_80\n";
  image.fmap["k"] = {"k",
                     {DLDataType{kDLOpaqueHandle, 64, 1}, DLDataType{kDLInt, 32, 1}, DLDataType{kDLFloat, 32, 1},
                      DLDataType{kDLInt, 64, 1}, DLDataType{kDLUInt, 32, 1}, DLDataType{kDLFloat, 64, 1}},
                     {"blockIdx.x", "threadIdx.x", kDynSmemTag}};
  return image;
}

// The fake records each parameter's bytes while this is alive.
struct RecordParams {
  explicit RecordParams(std::initializer_list<int> sizes) {
    int i = 0;
    for (int n : sizes) state()->param_sizes[i++] = n;
  }
  ~RecordParams() { std::memset(state()->param_sizes, 0, sizeof(state()->param_sizes)); }
};

template <typename T>
T param(int i) {
  T v;
  std::memcpy(&v, state()->params[i], sizeof(T));
  return v;
}

void call(const PackedFunc& k, void* buffer, uint32_t smem) {
  call_function(k, ArgList()
                       .add_handle(buffer)
                       .add_int(-7)
                       .add_float(1.5)
                       .add_int(int64_t(1) << 40)
                       .add_int(0xfffffff0u)
                       .add_float(2.25)
                       .add_int(3)
                       .add_int(128)
                       .add_int(smem));
}
}  // namespace

TEST(CudaKernelArgs, ScalarsDynamicSharedMemoryAndPtx) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  cuda_test::init();
  Module m(new CudaModuleNode(scalar_kernel_ptx(), cuda_device_api()));
  PackedFunc k = m->get_function("k");
  ASSERT_TRUE(k);
  RecordParams sizes{8, 4, 4, 8, 4, 8};
  int attr_calls = state()->func_attr_calls;
  int buffer = 0;
  call(k, &buffer, 64 * 1024);

  EXPECT_EQ(std::string(state()->image_head), "// ptx\n.version");
  EXPECT_TRUE(state()->image_ptx_terminated);
  ASSERT_EQ(state()->nparams, 6);
  EXPECT_EQ(param<void*>(0), &buffer);
  EXPECT_EQ(param<int32_t>(1), -7);
  EXPECT_EQ(param<float>(2), 1.5f);
  EXPECT_EQ(param<int64_t>(3), int64_t(1) << 40);
  EXPECT_EQ(param<uint32_t>(4), 0xfffffff0u);
  EXPECT_EQ(param<double>(5), 2.25);
  EXPECT_EQ(state()->grid[0], 3u);
  EXPECT_EQ(state()->block[0], 128u);
  EXPECT_EQ(state()->smem, 64u * 1024);
  // 64 KiB needs the opt-in, asked once; 40 KiB is under the default limit.
  EXPECT_EQ(state()->func_attr_calls, attr_calls + 1);
  EXPECT_EQ(state()->func_attr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  EXPECT_EQ(state()->func_attr_value, 64 * 1024);
  call(k, &buffer, 64 * 1024);
  call(k, &buffer, 40 * 1024);
  EXPECT_EQ(state()->func_attr_calls, attr_calls + 1);
  EXPECT_EQ(state()->smem, 40u * 1024);
}
