// The OpenCL back end on a real driver (PoCL here and in CI): every
// relax-opencl case within its tolerance through graphrt's C++ API
// (RelaxVM on opencl:0), the device API's copies, and crafted kernels run for
// real: scalars, views, and each way a module or a call can be wrong. Skips
// without an OpenCL device (fails instead in CI, see opencl_test_util.h).
#include <gtest/gtest.h>

#include <dirent.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "graphrt/ndarray.h"
#include "graphrt/relax_vm.h"
#include "opencl_test_util.h"
#include "test_support.h"

using namespace graphrt;
using namespace graphrt::opencl_backend;
using namespace opencl_test;

namespace {

const DLDevice kDev{kDLOpenCL, 0};
const DLDevice kCpu{kDLCPU, 0};

Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("none");
}

NDArray from_npy(const graphrt_test::Npy& npy, DLDevice dev) {
  NDArray host = NDArray::empty(npy.shape, npy.dtype, kCpu);
  host.copy_from_bytes(npy.data.data(), npy.data.size());
  return dev.device_type == kDLCPU ? host : host.copy_to_device(dev);
}

std::vector<float> host_floats(const NDArray& a) {
  NDArray h = a.device().device_type == kDLCPU ? a : a.copy_to_device(kCpu);
  const float* p = static_cast<const float*>(h->data);
  return std::vector<float>(p, p + h.nbytes() / 4);
}

// Largest difference between `got` and the .npy, element by element in its dtype.
double max_difference(const NDArray& got_any, const graphrt_test::Npy& expected) {
  NDArray got = got_any.device().device_type == kDLCPU ? got_any : got_any.copy_to_device(kCpu);
  EXPECT_EQ(got.shape(), expected.shape);
  EXPECT_EQ(got.nbytes(), expected.data.size());
  double worst = 0;
  const size_t n = expected.data.size() / 4;
  for (size_t i = 0; i < n; ++i) {
    double g, e;
    if (expected.dtype.code == kDLFloat) {
      g = static_cast<const float*>(got->data)[i];
      e = reinterpret_cast<const float*>(expected.data.data())[i];
    } else {
      g = static_cast<const int32_t*>(got->data)[i];
      e = reinterpret_cast<const int32_t*>(expected.data.data())[i];
    }
    worst = std::max(worst, std::isnan(g - e) ? INFINITY : std::fabs(g - e));
  }
  return worst;
}

std::vector<std::string> case_names() {
  std::vector<std::string> out;
  const std::string root = graphrt_test::fixtures_dir() + "/relax-opencl";
  if (graphrt_test::fixtures_dir().empty()) return {"relax_opencl_fixtures_missing"};
  if (DIR* d = opendir(root.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) out.push_back("relax_opencl_fixtures_missing");
  return out;
}

class RelaxOpenclCase : public ::testing::TestWithParam<std::string> {};

// Buffers of n floats on the device, filled with `values`.
NDArray device_floats(const std::vector<float>& values) {
  NDArray h = NDArray::empty({static_cast<int64_t>(values.size())}, kF32, kCpu);
  h.copy_from_bytes(values.data(), values.size() * 4);
  return h.copy_to_device(kDev);
}

void call(const PackedFunc& f, std::vector<TVMValue> v, std::vector<int> codes) {
  RetValue ret;
  f->call(TVMArgs(v.data(), codes.data(), static_cast<int>(v.size())), &ret);
}

TVMValue handle(const void* p) {
  TVMValue v;
  v.v_handle = const_cast<void*>(p);
  return v;
}
TVMValue i64(int64_t x) {
  TVMValue v;
  v.v_int64 = x;
  return v;
}
TVMValue f64(double x) {
  TVMValue v;
  v.v_float64 = x;
  return v;
}

const char* kAxpy =
    "// Function: axpy\n"
    "__kernel void axpy(__global float* restrict y, __global const float* restrict x, float a, int n) {\n"
    "  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

Module axpy_module() {
  return load(image({function("axpy", {kHandle, kHandle, kF32, kI32}, {"blockIdx.x", "threadIdx.x"})}, kAxpy),
              opencl_device_api());
}

}  // namespace

TEST_P(RelaxOpenclCase, WithinToleranceOfTvmForEveryInputSet) {
  GRAPHRT_REQUIRE_FIXTURES();
  if (GetParam() == "relax_opencl_fixtures_missing") {
    if (graphrt_test::fixtures_required()) FAIL() << "relax-opencl fixtures missing";
    GTEST_SKIP() << "relax-opencl fixtures not found";
  }
  REQUIRE_OPENCL();
  const std::string dir = graphrt_test::fixtures_dir() + "/relax-opencl/" + GetParam();
  std::ifstream in(dir + "/case.json");
  const nlohmann::json info = nlohmann::json::parse(in);
  const double tolerance = info.at("tolerance").get<double>();
  std::vector<std::string> order = info.value("input_order", std::vector<std::string>{});
  std::vector<std::string> suffixes;
  for (const auto& s : info.value("input_sets", nlohmann::json::array())) suffixes.push_back(s.value("suffix", ""));
  if (suffixes.empty()) suffixes.push_back("");
  RelaxVM vm(load_module(dir + "/deploy_relax.so"), kDev);
  for (const std::string& suffix : suffixes) {
    SCOPED_TRACE("input set '" + suffix + "'");
    std::vector<NDArray> args;
    for (const std::string& name : order)
      args.push_back(from_npy(graphrt_test::read_npy(dir + "/input_" + name + suffix + ".npy"), kDev));
    std::vector<NDArray> got = vm.call(info.value("entry", "main"), args).flatten();
    ASSERT_EQ(got.size(), info.at("outputs").size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].device().device_type, kDLOpenCL);
      const auto expected = graphrt_test::read_npy(dir + "/output_" + std::to_string(i) + suffix + ".npy");
      EXPECT_LE(max_difference(got[i], expected), tolerance) << "output " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RelaxOpenclCase, ::testing::ValuesIn(case_names()));

TEST(OpenclDevice, CopiesRoundTripThroughViewsAndBetweenBuffers) {
  REQUIRE_OPENCL();
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  NDArray a = device_floats(values);
  EXPECT_EQ(host_floats(a), values);
  NDArray view = a.view({10}, kF32, 400);  // elements 100..109
  EXPECT_EQ(host_floats(view), std::vector<float>(values.begin() + 100, values.begin() + 110));
  NDArray b = NDArray::empty({1000}, kF32, kDev);
  b.copy_from(a.handle());
  EXPECT_EQ(host_floats(b), values);
  EXPECT_EQ(opencl_device_api()->device(0).base_align_bytes % 4, 0u);
}

TEST(OpenclDevice, AKernelRunsWithBuffersScalarsAndAnAlignedView) {
  REQUIRE_OPENCL();
  Module m = axpy_module();
  PackedFunc f = m->get_function("axpy");
  std::vector<float> x(300), y(300, 1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  NDArray dx = device_floats(x), dy = device_floats(y);
  opencl_device_api()->set_device(kDev);
  const std::vector<int> codes = {kTVMOpaqueHandle, kTVMOpaqueHandle, kDLFloat, kDLInt, kDLInt, kDLInt};
  call(f, {handle(dy->data), handle(dx->data), f64(2.0), i64(300), i64(3), i64(128)}, codes);
  std::vector<float> got = host_floats(dy);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], 2.0f * x[i] + 1.0f) << i;
  // y[128..] += x[0..]: the argument is a sub-buffer at 512 bytes.
  const size_t align = opencl_device_api()->device(0).base_align_bytes;
  ASSERT_EQ(512 % align, 0u);
  call(f, {handle(static_cast<char*>(dy->data) + 512), handle(dx->data), f64(1.0), i64(4), i64(1), i64(4)}, codes);
  got = host_floats(dy);
  EXPECT_EQ(got[128], 2.0f * 128 + 1.0f + 0.0f);
  EXPECT_EQ(got[129], 2.0f * 129 + 1.0f + 1.0f);
  EXPECT_EQ(got[131], 2.0f * 131 + 1.0f + 3.0f);
  EXPECT_EQ(got[132], 2.0f * 132 + 1.0f);
  // A misaligned view is refused by name, not passed to the driver.
  Error e = error_of([&] {
    call(f, {handle(static_cast<char*>(dy->data) + 4), handle(dx->data), f64(1.0), i64(4), i64(1), i64(4)}, codes);
  });
  EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  EXPECT_NE(std::string(e.what()).find("argument 0 of opencl kernel 'axpy' starts 4 bytes into its buffer"),
            std::string::npos)
      << e.what();
}

TEST(OpenclDevice, AHostPointerOrAWrongCountIsAnErrorNotACrash) {
  REQUIRE_OPENCL();
  Module m = axpy_module();
  PackedFunc f = m->get_function("axpy");
  NDArray dy = device_floats(std::vector<float>(4, 0.0f));
  float host[4] = {0, 0, 0, 0};
  opencl_device_api()->set_device(kDev);
  const std::vector<int> codes = {kTVMOpaqueHandle, kTVMOpaqueHandle, kDLFloat, kDLInt, kDLInt, kDLInt};
  Error e = error_of([&] { call(f, {handle(dy->data), handle(host), f64(1), i64(4), i64(1), i64(4)}, codes); });
  EXPECT_NE(std::string(e.what()).find("argument 1 of opencl kernel 'axpy' (address "), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("is not an OpenCL buffer"), std::string::npos) << e.what();
  EXPECT_EQ(e.context_value("function"), "'axpy'");
  Error count = error_of([&] { call(f, {handle(dy->data), handle(dy->data), f64(1), i64(4), i64(1)}, {3, 3, 2, 0, 0}); });
  EXPECT_EQ(count.kind(), ErrorKind::kTypeMismatch);
  Error extent = error_of([&] { call(f, {handle(dy->data), handle(dy->data), f64(1), i64(4), i64(-3), i64(4)}, codes); });
  EXPECT_EQ(extent.context_value("field"), "launch_param_tags");
}

TEST(OpenclDevice, SourceThatDoesNotBuildEndsInOneErrorWithTheBuildLog) {
  REQUIRE_OPENCL();
  Module m = load(image({function("broken", {kHandle}, {"threadIdx.x"})},
                        "// Function: broken\n__kernel void broken(__global float* a) { a[0] = undeclared_name; }\n"),
                  opencl_device_api());
  NDArray a = device_floats({0.0f});
  opencl_device_api()->set_device(kDev);
  Error e = error_of([&] { call(m->get_function("broken"), {handle(a->data), i64(1)}, {kTVMOpaqueHandle, kDLInt}); });
  const std::string what = e.what();
  EXPECT_NE(what.find("clBuildProgram of opencl kernel 'broken' on opencl:0"), std::string::npos) << what;
  EXPECT_NE(what.find("CL_BUILD_PROGRAM_FAILURE (-11)"), std::string::npos) << what;
  EXPECT_NE(what.find("undeclared_name"), std::string::npos) << what;  // from the build log
  EXPECT_EQ(e.context_value("module"), "opencl");
  EXPECT_EQ(e.context_value("function"), "'broken'");
  EXPECT_EQ(e.context_value("field"), "code");
}

TEST(OpenclDevice, AKernelMissingFromItsSectionOrWithOtherParametersIsRefused) {
  REQUIRE_OPENCL();
  NDArray a = device_floats({0.0f});
  opencl_device_api()->set_device(kDev);
  Module other = load(image({function("k", {kHandle}, {"threadIdx.x"})},
                            "// Function: k\n__kernel void not_k(__global float* a) { a[0] = 1.0f; }\n"),
                      opencl_device_api());
  Error missing = error_of([&] { call(other->get_function("k"), {handle(a->data), i64(1)}, {kTVMOpaqueHandle, kDLInt}); });
  EXPECT_NE(std::string(missing.what()).find("clCreateKernel('k') on opencl:0 failed"), std::string::npos)
      << missing.what();
  EXPECT_EQ(missing.context_value("field"), "code");
  Module fewer = load(image({function("k", {kHandle}, {"threadIdx.x"})},
                            "// Function: k\n__kernel void k(__global float* a, int n) { a[0] = n; }\n"),
                      opencl_device_api());
  Error count = error_of([&] { call(fewer->get_function("k"), {handle(a->data), i64(1)}, {kTVMOpaqueHandle, kDLInt}); });
  EXPECT_NE(std::string(count.what()).find("opencl kernel 'k' takes 2 parameters in its source, the function table "
                                           "lists 1 arguments"),
            std::string::npos)
      << count.what();
  EXPECT_EQ(count.context_value("function"), "'k'");
  EXPECT_EQ(count.context_value("field"), "arg_types");
}

TEST(OpenclDevice, NoSuchDeviceIsOutOfRange) {
  REQUIRE_OPENCL();
  const int n = opencl_device_api()->device_count();
  Error e = error_of([&] { NDArray::empty({4}, kF32, DLDevice{kDLOpenCL, n}); });
  EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
  EXPECT_NE(std::string(e.what()).find("no OpenCL device " + std::to_string(n)), std::string::npos) << e.what();
}
