// kDLCUDAHost arrays against the fake driver: pinned through cuMemHostAlloc.
#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "graphrt/ndarray.h"

using namespace graphrt;
using cuda_fake::state;

TEST(CudaHostMemory, PinnedByTheDriverAndCopiedToTheGpu) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  cuda_test::init();
  const DLDataType f32{kDLFloat, 32, 1};
  int allocs = state()->host_allocs;
  int frees = state()->host_frees;
  {
    NDArray pinned = NDArray::empty({8}, f32, DLDevice{kDLCUDAHost, 0});
    EXPECT_EQ(state()->host_allocs, allocs + 1);
    EXPECT_EQ(state()->host_alloc_flags, 1u);  // portable: pinned for every context
    for (int i = 0; i < 8; ++i) static_cast<float*>(pinned->data)[i] = float(i);
    NDArray gpu = pinned.copy_to_device(DLDevice{kDLCUDA, 0});
    NDArray back = gpu.copy_to_device(DLDevice{kDLCUDAHost, 0});
    NDArray cpu = back.copy_to_device(DLDevice{kDLCPU, 0});
    EXPECT_EQ(static_cast<float*>(cpu->data)[7], 7.0f);
    EXPECT_EQ(state()->host_allocs, allocs + 2);
  }
  EXPECT_EQ(state()->host_frees, frees + 2);
}
