// CUDA-graph capture of the mlp_cuda graph against the fake driver, which
// tracks capture state per stream and fails as the real driver does when a
// capture is disturbed.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "graphrt/device_api.h"
#include "graphrt/graph_executor.h"
#include "graphrt/log.h"
#include "backends/cuda/cuda_device_api.h"
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

// What another thread does in the middle of a capture: a copy to the GPU on
// the legacy stream, as another executor's set_input would.
std::string legacy_copy_result;
void copy_on_legacy_stream_elsewhere() {
  std::thread other([] {
    try {
      NDArray a = NDArray::empty({4}, kF32, kGpu0);
      float v[4] = {1, 2, 3, 4};
      a.copy_from_bytes(v, sizeof(v));
      legacy_copy_result = "ok";
    } catch (const std::exception& e) {
      legacy_copy_result = e.what();
    }
  });
  other.join();
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

// Legacy-stream work elsewhere in the process while an executor captures
// neither fails nor spoils the capture: the capture stream is non-blocking.
TEST(CudaCapture, LegacyStreamUseElsewhereDuringCapture) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  auto ex = capturing_executor();
  int implicit = state()->implicit_sync;
  legacy_copy_result.clear();
  state()->on_captured_launch = copy_on_legacy_stream_elsewhere;
  ex->run();
  EXPECT_EQ(legacy_copy_result, "ok");
  EXPECT_EQ(state()->implicit_sync, implicit);
  EXPECT_TRUE(ex->device_graph_active());
}

// Two executors capture at the same time (the second's whole first run, plain
// and captured, happens inside the first's capture).
TEST(CudaCapture, TwoExecutorsCaptureAtOnce) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  auto first = capturing_executor();
  auto second = capturing_executor();
  static GraphExecutor* inner;
  static std::string inner_error;
  inner = second.get();
  inner_error.clear();
  state()->on_captured_launch = [] {
    std::thread([] {
      try {
        inner->run();
      } catch (const std::exception& e) {
        inner_error = e.what();
      }
    }).join();
  };
  first->run();
  EXPECT_EQ(inner_error, "");
  EXPECT_TRUE(first->device_graph_active());
  EXPECT_TRUE(second->device_graph_active());
}

// A capture invalidated from elsewhere: the run that tried it still
// succeeds (its plain run produced the outputs), the reason is logged and
// later runs go node by node.
TEST(CudaCapture, InvalidatedCaptureFallsBackToNodeByNode) {
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

// A replay runs on the graph's own stream, after the work already queued on
// the thread's stream and before the work queued after it (the output copy).
TEST(CudaCapture, ReplayOrderedWithTheThreadsStream) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  auto ex = capturing_executor();
  ex->run();
  ASSERT_TRUE(ex->device_graph_active());
  cuda_fake::LogMark mark;
  ex->run();
  NDArray out = ex->get_output(0).copy_to_device(DLDevice{kDLCPU, 0});
  std::string log = mark.since();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m,
                                std::regex("record:(e\\d+):s0@1 .*wait:(s\\d+):\\1@1 .*graph_launch:\\2 .*"
                                           "record:(e\\d+):\\2@1 .*wait:s0:\\3@1 .*dtoh:s0")))
      << log;
  EXPECT_NE(m[2].str(), "s0") << log;
}

// The thread's stream during capture and replay is a user stream, freed
// before the executor: freeing the graph touches only the graph's own stream.
TEST(CudaCapture, FreeAfterTheUserStreamIsGone) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  DeviceAPI* api = device_api(kGpu0);
  void* user = api->create_stream(kGpu0);
  api->set_stream(kGpu0, user);
  auto ex = capturing_executor();
  ex->run();
  ex->run();
  ASSERT_TRUE(ex->device_graph_active());
  api->set_stream(kGpu0, nullptr);
  api->free_stream(kGpu0, user);
  int destroyed = state()->destroyed_stream;
  ex.reset();
  EXPECT_EQ(state()->destroyed_stream, destroyed);
}

namespace {
ErrorKind kind_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no Error thrown";
  return ErrorKind::kInternal;
}
}  // namespace

// The throwing capture API: misuse is a failed precondition, a driver
// failure is a device error, and a failed capture_end leaves no capture
// behind and gives its stream back.
TEST(CudaCapture, ApiErrorsCarryTheirKinds) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  cuda_test::init();
  DeviceAPI* api = device_api(kGpu0);
  EXPECT_EQ(kind_of([&] { api->capture_end(kGpu0); }), ErrorKind::kFailedPrecondition);
  api->capture_begin(kGpu0);
  EXPECT_EQ(kind_of([&] { api->capture_begin(kGpu0); }), ErrorKind::kFailedPrecondition);
  cuda_fake::entry<void (*)()>("fake_cuda_invalidate_captures")();
  cuda_fake::LogMark mark;
  try {
    api->capture_end(kGpu0);
    ADD_FAILURE() << "an invalidated capture ended without an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDevice);
    EXPECT_NE(std::string(e.what()).find("cuStreamEndCapture"), std::string::npos) << e.what();
  }
  std::smatch m;
  std::string log = mark.since();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("end_capture:(s\\d+) .*stream_destroy:\\1"))) << log;
  EXPECT_EQ(kind_of([&] { api->capture_end(kGpu0); }), ErrorKind::kFailedPrecondition);
  // The thread can capture again afterwards.
  api->capture_begin(kGpu0);
  void* graph = api->capture_end(kGpu0);
  ASSERT_NE(graph, nullptr);
  api->capture_free(kGpu0, graph);
}

// capture_begin refused (a capture of the caller's own is already under way
// on this thread): the run still succeeds, the reason is logged, and the
// executor goes on node by node.
TEST(CudaCapture, RefusedBeginFallsBackToNodeByNode) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  auto ex = capturing_executor();
  DeviceAPI* api = device_api(kGpu0);
  {
    LogCapture log;
    api->capture_begin(kGpu0);
    EXPECT_NO_THROW(ex->run());
    api->capture_free(kGpu0, api->capture_end(kGpu0));
    EXPECT_FALSE(ex->device_graph_active());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("running node by node"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("already in progress"), std::string::npos) << warnings[0];
  }
  int launches = state()->launches;
  ex->run();
  EXPECT_EQ(state()->launches, launches + 4);
}
