// Contexts against the fake driver, which fails a call made with no context
// current and unloads a module only from its own context.
#include <gtest/gtest.h>

#include <thread>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "graphrt/ndarray.h"
#include "backends/cuda/cuda_device_api.h"

using namespace graphrt;
using namespace graphrt::cuda_backend;
using cuda_fake::state;

namespace {
const DLDataType kF32{kDLFloat, 32, 1};
const DLDevice kGpu0{kDLCUDA, 0};

using CtxSetCurrent = int (*)(void*);
using CtxGetCurrent = int (*)(void**);

void* current_context() {
  void* ctx = nullptr;
  cuda_fake::entry<CtxGetCurrent>("cuCtxGetCurrent")(&ctx);
  return ctx;
}

CudaModuleImage one_kernel_image() {
  CudaModuleImage image;
  image.fmt = "cubin";
  image.data = std::string("\x7f" "ELF fake cubin image", 20);
  image.fmap["k"] = {"k", {DLDataType{kDLOpaqueHandle, 64, 1}}, {"threadIdx.x"}};
  return image;
}
}  // namespace

// Another library on this thread makes no context (or its own) current
// between two graphrt calls: graphrt must notice and set its own again.
TEST(CudaContext, SwitchedByAnotherLibraryIsRestored) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  cuda_test::init();
  NDArray a = NDArray::empty({4}, kF32, kGpu0);
  float v[4] = {1, 2, 3, 4}, w[4] = {};
  a.copy_from_bytes(v, sizeof(v));
  cuda_fake::entry<CtxSetCurrent>("cuCtxSetCurrent")(nullptr);
  int wrong_before = state()->wrong_context;
  a.copy_from_bytes(v, sizeof(v));
  a.copy_to_bytes(w, sizeof(w));
  EXPECT_EQ(w[3], 4.0f);
  EXPECT_EQ(state()->wrong_context, wrong_before);
  EXPECT_NE(current_context(), nullptr);
}

// The last reference to a module dropped on a thread with no context
// current: the module is unloaded from its own context, and the thread is
// left as it was.
TEST(CudaContext, ModuleUnloadedWithItsContextCurrent) {
  cuda_test::init();
  auto* module = new CudaModuleNode(one_kernel_image(), cuda_device_api());
  Module m(module);
  cuda_device_api()->set_device(kGpu0);
  ASSERT_NE(module->get_cu_module(0), nullptr);
  int unloads = state()->module_unloads;
  int wrong_before = state()->wrong_context;
  std::thread other([&] {
    EXPECT_EQ(current_context(), nullptr);
    m = Module();
    EXPECT_EQ(current_context(), nullptr);
  });
  other.join();
  EXPECT_EQ(state()->module_unloads, unloads + 1);
  EXPECT_EQ(state()->wrong_context, wrong_before);
}
