// Behaviour without a usable CUDA driver: clear messages, CPU unaffected.
// GRAPHRT_CUDA_DRIVER points every runtime's driver at a missing library
// (set before main, before anything opens the driver).
#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/stat.h>

#include "cuda_test_util.h"
#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"
#include "backends/cuda/cuda_device_api.h"
#include "backends/cuda/register.h"
#include "test_support.h"

using namespace graphrt;
using namespace graphrt::cuda_backend;

namespace {
const int kEnvSet = setenv("GRAPHRT_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);

bool file_exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}
}  // namespace

TEST(CudaDriverAbsent, LoadReportsMissingLibrary) {
  CudaDriver d = CudaDriver::load("/nonexistent/libcuda.so");
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.error.rfind("libcuda.so not found: ", 0), 0u) << d.error;
  EXPECT_EQ(d.cuInit, nullptr);
}

TEST(CudaDriverAbsent, NotACudaLibrary) {
  // A real shared library without the driver's entry points.
  CudaDriver d = CudaDriver::load("libm.so.6");
  EXPECT_FALSE(d.ok());
  EXPECT_NE(d.error.find("lacks CUDA driver entry points"), std::string::npos) << d.error;
  EXPECT_NE(d.error.find("cuInit"), std::string::npos) << d.error;
}

TEST(CudaDriverAbsent, ToolkitStubLibrary) {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!file_exists(stub)) GTEST_SKIP() << stub << " not present";
  CudaDeviceAPI api(stub);
  try {
    api.check_available(DLDevice{kDLCUDA, 0});
    ADD_FAILURE() << "the stub answers every call with CUDA_ERROR_STUB_LIBRARY";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDevice) << e.what();
    std::printf("stub driver: %s\n", e.what());
  }
  EXPECT_EQ(api.device_count(), 0);
}

TEST(CudaDriverAbsent, DeviceApiSaysWhy) {
  CudaDeviceAPI api("/nonexistent/libcuda.so.1");
  try {
    api.check_available(DLDevice{kDLCUDA, 0});
    ADD_FAILURE() << "a missing driver leaves the device unavailable";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDevice);
    EXPECT_EQ(e.message().rfind("libcuda.so.1 not found: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(api.device_count(), 0);
  EXPECT_THROW(api.alloc(DLDevice{kDLCUDA, 0}, 16, 64), Error);
  EXPECT_THROW(api.set_device(DLDevice{kDLCUDA, 0}), Error);
  try {
    api.capture_begin(DLDevice{kDLCUDA, 0});
    ADD_FAILURE() << "capture without a driver";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDevice);
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos) << e.what();
  }
  api.free(DLDevice{kDLCUDA, 0}, nullptr);  // harmless
}

TEST(CudaDriverAbsent, ProcessWideApiAndCpuStillWork) {
  ASSERT_EQ(kEnvSet, 0);
  cuda_test::init();
  EXPECT_EQ(default_driver_path(), "/nonexistent/libcuda.so.1");
  try {
    device_api(DLDevice{kDLCUDA, 0});
    FAIL() << "cuda:0 reported available";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1 not found"), std::string::npos) << e.what();
  }
  EXPECT_THROW(NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, 0}), Error);
  // The back end registers kDLCUDAHost, so pinned memory is refused rather
  // than silently handed out as pageable CPU memory.
  try {
    NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDAHost, 0});
    ADD_FAILURE() << "pinned host memory without a driver";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDevice) << e.what();
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1 not found"), std::string::npos) << e.what();
  }
  NDArray a = NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  float v[4] = {1, 2, 3, 4};
  a.copy_from_bytes(v, sizeof(v));
  float w[4] = {};
  a.copy_to_bytes(w, sizeof(w));
  EXPECT_EQ(w[3], 4.0f);
}

TEST(CudaDriverAbsent, FixtureLoadsButCannotRun) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  // Loading needs no driver: the image is only handed to the driver on first launch.
  Module lib = load_module(graphrt_test::fixture_path("mlp_cuda/deploy_lib.so"));
  ASSERT_NE(cuda_test::find_cuda_module(lib), nullptr) << describe_module_tree(lib);
  Module factory = load_module(graphrt_test::fixture_path("mlp_cuda/deploy_factory.so"));
  PackedFunc create = factory->require_function("default");
  try {
    call_function(create, ArgList().add_device(DLDevice{kDLCUDA, 0}));
    FAIL() << "executor created without a driver";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1 not found"), std::string::npos) << e.what();
  }
}

// Each runtime owns its CUDA device API (for kDLCUDA and kDLCUDAHost, through
// its device table), and releases it with its registries; the default
// runtime's is another one again.
TEST(CudaDriverAbsent, EachRuntimeOwnsItsDeviceApi) {
  std::weak_ptr<CudaDeviceAPI> released;
  {
    Runtime first, second;
    register_backend(first);
    register_backend(second);
    auto* api = dynamic_cast<CudaDeviceAPI*>(first.device_api_or_null(kDLCUDA));
    ASSERT_NE(api, nullptr);
    EXPECT_NE(api, second.device_api_or_null(kDLCUDA));
    EXPECT_NE(api, cuda_device_api().get());
    ASSERT_NE(first.device_api_or_null(kDLCUDAHost), nullptr);
    released = api->shared_from_this();
    // The driver is missing here too: the runtime's own API says so.
    EXPECT_THROW(api->check_available(DLDevice{kDLCUDA, 0}), Error);
  }
  EXPECT_TRUE(released.expired());
}
