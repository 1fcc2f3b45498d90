// The Vulkan back end on a real device (lavapipe here and in CI): every
// relax-vulkan case and input set within its tolerance through the C++ API
// and the C API, copies through the device API, kernels refusing what does
// not fit them. Skips where no Vulkan device exists.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "backends/vulkan/vulkan_device_api.h"
#include "graphrt/c_api.h"
#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/relax_vm.h"
#include "vulkan_test_util.h"

namespace {

constexpr DLDevice kVulkan{kDLVulkan, 0};

std::shared_ptr<graphrt::vulkan_backend::VulkanDeviceAPI> api() {
  return graphrt::vulkan_backend::vulkan_device_api();
}

// CI (CI=true) and GRAPHRT_REQUIRE_VULKAN=1 have a Vulkan device (lavapipe): there, none is a failure.
bool vulkan_required() {
  const char* ci = std::getenv("CI");
  const char* required = std::getenv("GRAPHRT_REQUIRE_VULKAN");
  return (ci && std::string(ci) == "true") || (required && std::string(required) == "1");
}

#define SKIP_WITHOUT_VULKAN()                                                                        \
  do {                                                                                               \
    if (api()->device_count() == 0) {                                                                \
      if (vulkan_required()) FAIL() << "no Vulkan device, and one is required: " << api()->init_error(); \
      GTEST_SKIP() << "no Vulkan device: " << api()->init_error();                                   \
    }                                                                                                \
  } while (0)

graphrt::NDArray load_npy(const std::string& path) {
  graphrt_test::Npy a = graphrt_test::read_npy(path);
  graphrt::NDArray out = graphrt::NDArray::empty(a.shape, a.dtype, graphrt::cpu());
  out.copy_from_bytes(a.data.data(), a.data.size());
  return out;
}

// The largest difference between `got` (any device) and the .npy at `path`
// (float32 or int32, as the fixtures hold); infinity on a shape or dtype mismatch.
double max_difference(const graphrt::NDArray& got, const std::string& path) {
  graphrt_test::Npy want = graphrt_test::read_npy(path);
  if (got.shape() != want.shape || !graphrt::operator==(got.dtype(), want.dtype)) return INFINITY;
  std::vector<char> bytes(want.data.size());
  got.copy_to_bytes(bytes.data(), bytes.size());
  double worst = 0;
  const size_t n = bytes.size() / 4;
  for (size_t i = 0; i < n; ++i) {
    double a, b;
    if (want.dtype.code == kDLFloat) {
      float x, y;
      std::memcpy(&x, &bytes[4 * i], 4);
      std::memcpy(&y, &want.data[4 * i], 4);
      a = x, b = y;
    } else {
      int32_t x, y;
      std::memcpy(&x, &bytes[4 * i], 4);
      std::memcpy(&y, &want.data[4 * i], 4);
      a = x, b = y;
    }
    worst = std::max(worst, std::fabs(a - b));
  }
  return worst;
}

std::vector<std::string> suffixes(const nlohmann::json& info) {
  std::vector<std::string> out;
  for (const auto& s : info.value("input_sets", nlohmann::json::array())) out.push_back(s.value("suffix", ""));
  if (out.empty()) out.push_back("");
  return out;
}

class VulkanCase : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    GRAPHRT_REQUIRE_FIXTURES();
    if (vulkan_test::case_names().empty()) GTEST_SKIP() << "relax-vulkan fixtures not found";
    SKIP_WITHOUT_VULKAN();
    dir_ = vulkan_test::case_dir(GetParam());
    info_ = vulkan_test::case_info(GetParam());
  }
  std::string dir_;
  nlohmann::json info_;
};

TEST_P(VulkanCase, EveryInputSetWithinToleranceThroughTheCppApi) {
  const double tolerance = info_.value("tolerance", 0.0);
  graphrt::RelaxVM vm(graphrt::load_module(dir_ + "/deploy_relax.so"), kVulkan);
  const auto order = info_["input_order"].get<std::vector<std::string>>();
  for (const std::string& suffix : suffixes(info_)) {
    SCOPED_TRACE("input set '" + suffix + "'");
    std::vector<graphrt::NDArray> args;
    // On the device, as TVM's VM takes them (the generated code checks each argument's device).
    for (const std::string& p : order)
      args.push_back(load_npy(dir_ + "/input_" + p + suffix + ".npy").copy_to_device(kVulkan));
    for (int round = 0; round < 2; ++round) {  // the second run reuses pipelines and pooled buffers
      const std::vector<graphrt::NDArray> outputs = vm.call(info_.value("entry", "main"), args).flatten();
      ASSERT_EQ(outputs.size(), info_["outputs"].size());
      for (size_t i = 0; i < outputs.size(); ++i) {
        const std::string want = dir_ + "/output_" + std::to_string(i) + suffix + ".npy";
        EXPECT_LE(max_difference(outputs[i], want), tolerance) << want;
      }
    }
  }
}

TEST_P(VulkanCase, TheCApiRunsItOnTheDevice) {
  graphrt_model_options options{};
  options.device_type = kDLVulkan;
  graphrt_model_t model = nullptr;
  ASSERT_EQ(graphrt_model_load((dir_ + "/deploy_relax.so").c_str(), &options, &model), 0) << TVMGetLastError();
  graphrt_runner_t runner = nullptr;
  ASSERT_EQ(graphrt_runner_create(model, nullptr, &runner), 0) << TVMGetLastError();
  const std::string suffix = suffixes(info_).front();
  std::vector<graphrt::NDArray> keep;
  for (const std::string& p : info_["input_order"].get<std::vector<std::string>>()) {
    keep.push_back(load_npy(dir_ + "/input_" + p + suffix + ".npy"));
    ASSERT_EQ(graphrt_runner_set_input(runner, p.c_str(), keep.back().handle()), 0) << TVMGetLastError();
  }
  ASSERT_EQ(graphrt_runner_run(runner), 0) << TVMGetLastError();
  int n = 0;
  ASSERT_EQ(graphrt_runner_num_outputs(runner, &n), 0);
  ASSERT_EQ(static_cast<size_t>(n), info_["outputs"].size());
  for (int i = 0; i < n; ++i) {
    TVMArrayHandle out = nullptr;
    ASSERT_EQ(graphrt_runner_get_output(runner, i, &out), 0) << TVMGetLastError();
    graphrt::NDArray got = graphrt::NDArray::adopt_handle(out);
    EXPECT_LE(max_difference(got, dir_ + "/output_" + std::to_string(i) + suffix + ".npy"), info_.value("tolerance", 0.0));
  }
  graphrt_runner_free(runner);
  graphrt_model_free(model);
}

INSTANTIATE_TEST_SUITE_P(Cases, VulkanCase, ::testing::ValuesIn([] {
                           std::vector<std::string> c = vulkan_test::case_names();
                           return c.empty() ? std::vector<std::string>{"none"} : c;
                         }()));

TEST(VulkanDeviceApi, CopiesRoundTripAtOffsetsAndBetweenBuffers) {
  SKIP_WITHOUT_VULKAN();
  std::vector<float> host(1024);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
  graphrt::NDArray a = graphrt::NDArray::empty({1024}, DLDataType{kDLFloat, 32, 1}, kVulkan);
  a.copy_from_bytes(host.data(), host.size() * 4);
  graphrt::NDArray b = a.copy_to_device(kVulkan);  // device to device
  std::vector<float> back(1024, -1.0f);
  b.copy_to_bytes(back.data(), back.size() * 4);
  EXPECT_EQ(back, host);
  // A view 256 bytes into the buffer (the VM offsets tensors into storage).
  DLTensor view = *a.handle();
  int64_t shape = 16;
  view.shape = &shape;
  view.byte_offset = 256;
  std::vector<float> part(16);
  DLTensor dst{part.data(), graphrt::cpu(), 1, DLDataType{kDLFloat, 32, 1}, &shape, nullptr, 0};
  api()->copy(&view, &dst, nullptr);
  EXPECT_EQ(part, std::vector<float>(host.begin() + 64, host.begin() + 80));
  view.byte_offset = 4096 - 32;  // 16 floats from 8 before the end: past it
  EXPECT_THROW(api()->copy(&view, &dst, nullptr), graphrt::Error);
}

TEST(VulkanDeviceApi, AHostPointerIsNotDeviceMemory) {
  SKIP_WITHOUT_VULKAN();
  float x = 0;
  try {
    api()->resolve(&x, "the test's pointer");
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not Vulkan device memory"), std::string::npos) << e.what();
  }
}

TEST(VulkanDeviceApi, AKernelCalledWithTheWrongArgumentsSaysWhich) {
  GRAPHRT_REQUIRE_FIXTURES();
  if (vulkan_test::case_names().empty()) GTEST_SKIP() << "relax-vulkan fixtures not found";
  SKIP_WITHOUT_VULKAN();
  graphrt::Module m = graphrt::load_module(vulkan_test::case_dir("relax_mlp_vulkan") + "/deploy_relax.so");
  auto* v = vulkan_test::find_vulkan_module(m);
  ASSERT_NE(v, nullptr);
  graphrt::PackedFunc f = v->get_function("softmax_kernel");
  ASSERT_TRUE(f);
  api()->set_device(kVulkan);
  float host = 0;
  TVMValue values[4];
  int codes[4] = {kTVMOpaqueHandle, kTVMOpaqueHandle, kDLInt, kDLInt};
  values[0].v_handle = &host;  // a host pointer where a buffer belongs
  values[1].v_handle = &host;
  values[2].v_int64 = 1;   // blockIdx.x
  values[3].v_int64 = 64;  // threadIdx.x: the shader's LocalSize
  graphrt::RetValue rv;
  try {
    f->call(graphrt::TVMArgs(values, codes, 4), &rv);
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("function"), "softmax_kernel") << e.what();
    EXPECT_NE(std::string(e.what()).find("buffer argument 0"), std::string::npos) << e.what();
  }
  try {
    f->call(graphrt::TVMArgs(values, codes, 3), &rv);
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("expects 4 arguments"), std::string::npos) << e.what();
  }
}

}  // namespace
