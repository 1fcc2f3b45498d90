// The whole CUDA launch path against a host-side fake driver
// (fake_libcuda.c): contexts, pool, copies, kernel argument packing and
// CUDA-graph capture, on any machine. Kernels do not execute, so outputs are
// not checked here (cuda_gpu_test does that on a GPU).
#include <cstring>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "graphrt/graph_executor.h"
#include "backends/cuda/cuda_device_api.h"
#include "test_support.h"

using namespace graphrt;
using namespace graphrt::cuda_backend;

namespace {
using cuda_fake::state;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
std::string fixture(const std::string& rel) { return graphrt_test::fixture_path("mlp_cuda/" + rel); }
}  // namespace

TEST(CudaFakeDriver, DeviceApi) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  cuda_test::init();
  ASSERT_NO_THROW(cuda_device_api()->check_available(DLDevice{kDLCUDA, 0}));
  try {
    cuda_device_api()->check_available(DLDevice{kDLCUDA, 2});
    ADD_FAILURE() << "the fake driver has two devices";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
    EXPECT_EQ(e.message(), "no CUDA device 2 (2 devices)");
  }
  EXPECT_EQ(cuda_device_api()->driver().version, 12040);
  NDArray a = NDArray::empty({10}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, 0});
  float v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, w[10] = {};
  a.copy_from_bytes(v, sizeof(v));
  NDArray b = a.copy_to_device(DLDevice{kDLCUDA, 0});
  b.copy_to_bytes(w, sizeof(w));
  EXPECT_EQ(w[9], 10.0f);
  int allocs = state()->allocs;
  { NDArray c = NDArray::empty({10}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, 0}); }
  { NDArray c = NDArray::empty({12}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, 0}); }  // same bucket
  EXPECT_EQ(state()->allocs, allocs + 1);
}

TEST(CudaFakeDriver, MlpCudaLaunchesAndCapture) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  fake_cuda_state* s = state();
  ASSERT_NE(s, nullptr);
  Module lib = load_module(fixture("deploy_lib.so"));
  std::string json = read_text(fixture("deploy_graph.json"));
  std::string params = read_text(fixture("deploy_params.params"));

  NDArray data = NDArray::empty({1, 1, 28, 28}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  std::memset(data->data, 0, data.nbytes());
  auto plain = GraphExecutor::create(json, lib, {DLDevice{kDLCUDA, 0}});
  plain->load_params(params);
  plain->set_input("data", data.handle());
  int before = s->launches;
  plain->run();
  int per_run = s->launches - before;
  EXPECT_EQ(per_run, 4);  // dense+relu, dense+relu, dense+add, softmax (batch_flatten is a __nop)
  EXPECT_EQ(s->module_loads, 1);
  EXPECT_GE(s->block[0], 1u);
  plain->run();
  EXPECT_EQ(s->launches - before, 2 * per_run);
  EXPECT_EQ(s->module_loads, 1);  // loaded once per device

  GraphExecutorOptions options;
  options.device_graph = true;
  auto graph = GraphExecutor::create(json, lib, {DLDevice{kDLCUDA, 0}}, options);
  graph->load_params(params);
  graph->set_input("data", data.handle());
  before = s->launches;
  graph->run();  // plain run, then capture
  EXPECT_EQ(s->launches - before, per_run);
  EXPECT_EQ(s->captured_launches, per_run);
  EXPECT_TRUE(graph->device_graph_active());
  graph->run();
  graph->run();
  EXPECT_EQ(s->graph_launches, 2);
  EXPECT_EQ(s->launches - before, per_run);  // replays launch no kernels one by one
  NDArray out = graph->get_output(0).copy_to_device(DLDevice{kDLCPU, 0});
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{1, 10}));
  std::printf("mlp_cuda: %d kernel launches per run\n", per_run);
}
