// CUDA-graph capture of the mlp_cuda graph against the fake driver, which
// tracks capture state per stream and fails as the real driver does when a
// capture is disturbed.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "graphrt/device_api.h"
#include "graphrt/graph_executor.h"
#include "graphrt/log.h"
#include "modules/cuda/cuda_device_api.h"
#include "test_support.h"

using namespace graphrt;
using namespace graphrt::cuda_backend;
using cuda_fake::state;

namespace {
const DLDataType kF32{kDLFloat, 32, 1};
const DLDevice kGpu0{kDLCUDA, 0};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
std::string fixture(const std::string& rel) { return graphrt_test::fixture_path("mlp_cuda/" + rel); }

std::shared_ptr<GraphExecutor> capturing_executor() {
  Module lib = load_module(fixture("deploy_lib.so"));
  GraphExecutorOptions options;
  options.device_graph = true;
  auto ex = GraphExecutor::create(read_text(fixture("deploy_graph.json")), lib, {kGpu0}, options);
  ex->load_params(read_text(fixture("deploy_params.params")));
  NDArray data = NDArray::empty({1, 1, 28, 28}, kF32, DLDevice{kDLCPU, 0});
  std::memset(data->data, 0, data.nbytes());
  ex->set_input("data", data.handle());
  return ex;
}

std::vector<std::string> warnings;
void collect_warning(LogLevel, const char* message, void*) { warnings.push_back(message); }

struct LogCapture {
  LogCapture() {
    warnings.clear();
    set_log_callback(collect_warning, nullptr);
  }
  ~LogCapture() { set_log_callback(nullptr, nullptr); }
};
}  // namespace

// A capture invalidated from elsewhere: the run that tried it still
// succeeds (its plain run produced the outputs), the reason is logged and
// later runs go node by node.
TEST(CudaCapture, InvalidatedCaptureFallsBackToNodeByNode) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  LogCapture log;
  auto ex = capturing_executor();
  state()->on_captured_launch = cuda_fake::entry<void (*)()>("fake_cuda_invalidate_captures");
  EXPECT_NO_THROW(ex->run());
  EXPECT_FALSE(ex->device_graph_active());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("running node by node"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("captur"), std::string::npos) << warnings[0];
  int launches = state()->launches;
  int replays = state()->graph_launches;
  ex->run();
  EXPECT_EQ(state()->launches, launches + 4);
  EXPECT_EQ(state()->graph_launches, replays);
}
