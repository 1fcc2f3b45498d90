// How graphrt resolves the driver's entry points, against the fake that
// exports cuGetProcAddress.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include "fake_libcuda.h"
#include "backends/cuda/cuda_driver.h"

using graphrt::cuda_backend::CudaDriver;

namespace {
fake_cuda_state* getproc_fake_state() {
  void* h = dlopen(GRAPHRT_FAKE_LIBCUDA_GETPROC, RTLD_NOW | RTLD_LOCAL);
  return h ? static_cast<fake_cuda_state*>(dlsym(h, "fake_cuda_state")) : nullptr;
}
}  // namespace

// Without an explicit flag the driver picks the default-stream semantics;
// graphrt's null stream means the legacy stream, so every lookup asks for it.
TEST(CudaDriverLoad, ProcAddressAsksForLegacyStreamEntryPoints) {
  CudaDriver d = CudaDriver::load(GRAPHRT_FAKE_LIBCUDA_GETPROC);
  ASSERT_TRUE(d.ok()) << d.error;
  fake_cuda_state* s = getproc_fake_state();
  ASSERT_NE(s, nullptr);
  EXPECT_GE(s->getproc_calls, 30);
  EXPECT_EQ(s->getproc_non_legacy, 0);
  EXPECT_EQ(s->getproc_flags, 1u);
  EXPECT_EQ(s->getproc_version, graphrt::cuda_backend::kCudaApiVersion);
}
