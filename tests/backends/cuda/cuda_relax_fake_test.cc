// Relax on CUDA without a GPU: relax-ffi/relax_mlp_cuda (a TVM v0.26 export:
// host code that finds its CUDA kernels through the library's imports) run by
// graphrt's Relax VM on cuda:0 of the fake driver, which runs this test's
// host versions of the three kernels at each launch (its device memory is host
// memory). Which kernel parameter is which Relax argument is read from the
// data pointers the VM's instrument sees, so the math is checked for real
// against TVM's expected output (tolerance 1e-3, as the case says), and the
// driver's log shows the devices, copies and launches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
#include "fixture_cases.h"
#include "graphrt/packed_func.h"
#include "test_support.h"

using namespace graphrt;
using cuda_fake::state;

namespace {

// Relax argument data pointers of each kernel call, in the Relax order, as the instrument saw them.
std::map<std::string, std::vector<const void*>> relax_args;

// The Relax argument (its position in the call) that kernel parameter `i` points at.
const float* arg(const char* call, void** params, int i, int* position) {
  void* p;
  std::memcpy(&p, params[i], sizeof(p));
  const std::vector<const void*>& seen = relax_args[call];
  for (size_t k = 0; k < seen.size(); ++k)
    if (seen[k] == p) *position = static_cast<int>(k);
  return static_cast<const float*>(p);
}

// The four parameters of a dense kernel, by the Relax order (x, w, b, out).
std::vector<float*> by_relax_order(const char* call, void** params, int n) {
  std::vector<float*> out(static_cast<size_t>(n), nullptr);
  for (int i = 0; i < n; ++i) {
    int position = -1;
    const float* p = arg(call, params, i, &position);
    if (position >= 0) out[static_cast<size_t>(position)] = const_cast<float*>(p);
  }
  return out;
}

// out[j] = act(sum_k x[k] w[k][j] + b[j]), x: [1, K], w: [K, N].
void dense(const char* call, void** params, int k_dim, int n_dim, bool relu) {
  const std::vector<float*> a = by_relax_order(call, params, 4);
  if (!a[0] || !a[1] || !a[2] || !a[3]) return;  // the test sees the output wrong
  for (int j = 0; j < n_dim; ++j) {
    float s = 0;
    for (int k = 0; k < k_dim; ++k) s += a[0][k] * a[1][k * n_dim + j];
    s += a[2][j];
    a[3][j] = relu && s < 0 ? 0 : s;
  }
}

void matmul_add_relu(void** p, const unsigned*, const unsigned*) { dense("fused_matmul_add_relu", p, 784, 256, true); }
void matmul1_add1(void** p, const unsigned*, const unsigned*) { dense("fused_matmul1_add1", p, 256, 10, false); }
void softmax(void** p, const unsigned*, const unsigned*) {
  const std::vector<float*> a = by_relax_order("softmax", p, 2);
  if (!a[0] || !a[1]) return;
  float top = a[0][0];
  for (int i = 1; i < 10; ++i) top = std::max(top, a[0][i]);
  float sum = 0;
  for (int i = 0; i < 10; ++i) sum += std::exp(a[0][i] - top);
  for (int i = 0; i < 10; ++i) a[1][i] = std::exp(a[0][i] - top) / sum;
}

void define_kernels() {
  auto define = cuda_fake::entry<decltype(&fake_cuda_define_kernel)>("fake_cuda_define_kernel");
  ASSERT_NE(define, nullptr);
  const int four[] = {8, 8, 8, 8};
  define("fused_matmul_add_relu_kernel", 4, four, matmul_add_relu);
  define("fused_matmul1_add1_kernel", 4, four, matmul1_add1);
  define("softmax_kernel", 2, four, softmax);
}

// Records, before each kernel call, the data pointers of its tensor arguments.
PackedFunc recording_instrument() {
  return make_function([](const TVMArgs& args, RetValue* ret) {
    ret->set_int(0);
    if (args.size() < 4 || args.as_int(2) == 0) return;  // after the call
    const std::string symbol = args.as_string(1);
    std::vector<const void*> pointers;
    for (int i = 4; i < args.size(); ++i)
      if (args.code(i) == kTVMNDArrayHandle || args.code(i) == kTVMDLTensorHandle)
        pointers.push_back(args.as_tensor(i)->data);
    relax_args[symbol] = pointers;
  });
}

NDArray npy_array(const std::string& path, DLDevice dev) {
  graphrt_test::Npy a = graphrt_test::read_npy(path);
  NDArray host = NDArray::empty(a.shape, a.dtype, DLDevice{kDLCPU, 0});
  host.copy_from_bytes(a.data.data(), a.data.size());
  return host.copy_to_device(dev);
}

TEST(RelaxOnCudaFakeDriver, MlpCudaExportRunsOnTheDeviceWithTvmOutputs) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  ASSERT_NE(state(), nullptr);
  define_kernels();
  const std::string dir = graphrt_test::fixtures_dir() + "/relax-ffi/relax_mlp_cuda";
  Module lib = load_module(dir + "/deploy_relax.so");
  Module vm = call_function(lib->require_function("vm_load_executable"), ArgList()).as_module();

  cuda_fake::LogMark init;
  const int loads_before = state()->module_loads, launches_before = state()->launches;
  call_function(vm->require_function("vm_initialization"),
                ArgList().add_int(kDLCUDA).add_int(0).add_int(2).add_int(kDLCPU).add_int(0).add_int(2));
  // The four weight and bias constants go to cuda:0 at initialisation, nothing runs.
  EXPECT_EQ(cuda_fake::count(init.since(), "htod"), 4) << init.since();
  EXPECT_EQ(state()->launches, launches_before);

  RetValue instrument, ignored;
  instrument.set_function(recording_instrument());
  vm->require_function("set_instrument")->call(instrument.as_args(), &ignored);

  const DLDevice gpu{kDLCUDA, 0};
  NDArray x = npy_array(dir + "/input_x.npy", gpu);
  cuda_fake::LogMark run;
  RetValue out = call_function(vm->require_function("main"), ArgList().add_ndarray(x));
  // Three kernels launched through the host code, the kernel image loaded once (a fatbin, as nvcc made it).
  EXPECT_EQ(state()->launches - launches_before, 3) << run.since();
  EXPECT_EQ(cuda_fake::count(run.since(), "htod"), 0) << run.since();
  EXPECT_EQ(state()->module_loads - loads_before, 1);
  const uint32_t fatbin_magic = 0xBA55ED50;
  EXPECT_EQ(std::memcmp(state()->image_head, &fatbin_magic, 4), 0);

  NDArray result = out.as_ndarray();
  ASSERT_EQ(result.device().device_type, kDLCUDA);
  EXPECT_EQ(graphrt_test::compare_output(result.copy_to_device(DLDevice{kDLCPU, 0}), dir + "/output_0.npy", 1e-3), "");
}

TEST(RelaxOnCudaFakeDriver, ACudaExportGivenTheCpuAloneFailsInItsKernelsCheck) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  const std::string dir = graphrt_test::fixtures_dir() + "/relax-ffi/relax_mlp_cuda";
  Module vm = call_function(load_module(dir + "/deploy_relax.so")->require_function("vm_load_executable"), ArgList())
                  .as_module();
  // The CPU alone: device 0 is then the host, and the export's host code
  // refuses host tensors before it launches anything (TVM's own check, its
  // error raised through tvm-ffi), named with the Relax function and kernel.
  call_function(vm->require_function("vm_initialization"), ArgList().add_int(kDLCPU).add_int(0).add_int(2));
  NDArray x = npy_array(dir + "/input_x.npy", DLDevice{kDLCPU, 0});
  try {
    call_function(vm->require_function("main"), ArgList().add_ndarray(x));
    FAIL() << "a CUDA export ran on the CPU";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("in Relax function 'main' calling 'fused_matmul_add_relu'"), std::string::npos) << what;
    EXPECT_NE(what.find("Mismatched x.device_type"), std::string::npos) << what;
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

}  // namespace
