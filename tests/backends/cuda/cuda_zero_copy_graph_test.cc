// Zero-copy tensors that move under a captured CUDA graph: the graph's kernel
// nodes are updated (cuGraphExecKernelNodeSetParams) and the next run replays
// it, with no plain run and no new capture. Proven against the fake driver,
// which runs the test's kernels on the host (its device memory is host
// memory) at each launch and replay, so the outputs are checked for real.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "cuda_test_util.h"
#include "fake_driver_util.h"
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
constexpr int kN = 64;

// The kernels as the fake runs them, and the addresses each last saw.
std::map<std::string, std::vector<uint64_t>> seen;
template <typename T>
T param(void** params, int i) {
  T v;
  std::memcpy(&v, params[i], sizeof(T));
  return v;
}
void add_one_kernel(void** p, const unsigned*, const unsigned*) {
  auto* in = param<float*>(p, 0);
  auto* out = param<float*>(p, 1);
  for (int i = 0; i < param<int32_t>(p, 2); ++i) out[i] = in[i] + 1;
  seen["add_one"] = {param<uint64_t>(p, 0), param<uint64_t>(p, 1)};
}
void add_kernel(void** p, const unsigned*, const unsigned*) {
  auto* a = param<float*>(p, 0);
  auto* b = param<float*>(p, 1);
  auto* out = param<float*>(p, 2);
  for (int i = 0; i < param<int32_t>(p, 3); ++i) out[i] = a[i] + b[i];
  seen["add"] = {param<uint64_t>(p, 0), param<uint64_t>(p, 1), param<uint64_t>(p, 2)};
}
void define_kernels() {
  auto define = cuda_fake::entry<decltype(&fake_cuda_define_kernel)>("fake_cuda_define_kernel");
  ASSERT_NE(define, nullptr);
  const int add_one_sizes[] = {8, 8, 4};
  const int add_sizes[] = {8, 8, 8, 4};
  define("add_one", 3, add_one_sizes, add_one_kernel);
  define("add", 4, add_sizes, add_kernel);
}

CudaModuleImage kernel_image() {
  const DLDataType handle{kDLOpaqueHandle, 64, 1}, i32{kDLInt, 32, 1};
  CudaModuleImage image;
  image.fmt = "cubin";
  image.data = "fake cubin";
  image.fmap["add_one"] = {"add_one", {handle, handle, i32}, {"threadIdx.x"}};
  image.fmap["add"] = {"add", {handle, handle, handle, i32}, {"threadIdx.x"}};
  return image;
}

// The host side of the model, as TVM's generated host code would be: each
// fused function launches its kernel with the tensors' data pointers.
class HostOps : public ModuleNode {
 public:
  explicit HostOps(Module kernels) : kernels_(kernels) {
    add_import(kernels);
    add_one_ = kernels->find_function("add_one", kernels);
    add_ = kernels->find_function("add", kernels);
  }
  std::string type_key() const override { return "test_host"; }
  PackedFunc find_function(const std::string& name, const Module&) override {
    if (name == "fused_add_one") {
      PackedFunc k = add_one_;
      return make_function([k](const TVMArgs& a, RetValue*) {
        call_function(k, ArgList().add_handle(a.as_tensor(0)->data).add_handle(a.as_tensor(1)->data).add_int(kN).add_int(kN));
      });
    }
    if (name == "fused_add") {
      PackedFunc k = add_;
      return make_function([k](const TVMArgs& a, RetValue*) {
        call_function(k, ArgList()
                             .add_handle(a.as_tensor(0)->data)
                             .add_handle(a.as_tensor(1)->data)
                             .add_handle(a.as_tensor(2)->data)
                             .add_int(kN)
                             .add_int(kN));
      });
    }
    return PackedFunc();
  }

 private:
  Module kernels_;
  PackedFunc add_one_, add_;
};

// out = (x + 1 + 1) + x. x is used by two nodes at different argument
// positions; out reuses t1's storage (storage_id 1), as TVM's plan does for
// a tensor whose life ends before the output's begins.
const char* kGraph = R"({
  "nodes": [
    {"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "inc1", "inputs": [[0, 0, 0]],
     "attrs": {"func_name": "fused_add_one", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}},
    {"op": "tvm_op", "name": "inc2", "inputs": [[1, 0, 0]],
     "attrs": {"func_name": "fused_add_one", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}},
    {"op": "tvm_op", "name": "sum", "inputs": [[2, 0, 0], [0, 0, 0]],
     "attrs": {"func_name": "fused_add", "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}}],
  "arg_nodes": [0], "node_row_ptr": [0, 1, 2, 3, 4], "heads": [[3, 0, 0]],
  "attrs": {
    "dltype": ["list_str", ["float32", "float32", "float32", "float32"]],
    "shape": ["list_shape", [[64], [64], [64], [64]]],
    "storage_id": ["list_int", [0, 1, 2, 1]]}})";

// The image goes through the real decoder, as a library's "cuda" record would.
std::shared_ptr<GraphExecutor> executor() {
  std::string payload = encode_cuda_payload(kernel_image());
  BlobReader reader(reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), "test cuda record");
  Module kernels = load_cuda_module(reader, cuda_device_api());
  Module lib = make_ref<HostOps>(kernels);
  GraphExecutorOptions options;
  options.device_graph = true;
  return GraphExecutor::create(kGraph, lib, {kGpu0}, options);
}

// Device arrays; the fake's device memory is host memory, read and written
// here directly.
NDArray filled(float base) {
  NDArray a = NDArray::empty({kN}, kF32, kGpu0);
  for (int i = 0; i < kN; ++i) static_cast<float*>(a->data)[i] = base + static_cast<float>(i);
  return a;
}
float at(const NDArray& a, int i) { return static_cast<const float*>(a->data)[i]; }
uint64_t address(const NDArray& a) { return reinterpret_cast<uintptr_t>(a->data); }

// out must be 2x + 2 everywhere.
void expect_model_output(const NDArray& x, const NDArray& out) {
  for (int i = 0; i < kN; ++i) ASSERT_EQ(at(out, i), 2 * at(x, i) + 2) << "element " << i;
}

struct Counts {
  int launches = state()->launches;
  int captured = state()->captured_launches;
  int replays = state()->graph_launches;
  int updates = state()->node_updates;
};

std::vector<std::string> warnings;
void collect_warning(LogLevel, const char* message, void*) { warnings.push_back(message); }
struct LogCapture {
  LogCapture() {
    warnings.clear();
    set_log_callback(collect_warning, nullptr);
  }
  ~LogCapture() { set_log_callback(nullptr, nullptr); }
};

// A captured executor with x zero-copied; out is still the executor's own
// storage, which t1 shares.
struct Captured {
  std::shared_ptr<GraphExecutor> ex = executor();
  NDArray x = filled(1);
  NDArray out;
  Captured() {
    ex->set_input_zero_copy(0, x.handle());
    ex->run();  // plain run, then the capture
    out = ex->get_output(0);
  }
};
}  // namespace

// The server pattern: fresh input and output buffers per request. The node
// updates land in the graph, the next run is one replay, and the kernels
// read and write the new buffers; the intermediate that shared the old
// output's storage keeps its own buffer.
TEST(CudaZeroCopyGraph, NewBuffersReplayWithoutRecapture) {
  ASSERT_EQ(cuda_fake::kEnvSet, 0);
  cuda_test::init();
  define_kernels();
  Captured c;
  ASSERT_TRUE(c.ex->device_graph_active());
  expect_model_output(c.x, c.out);

  std::vector<NDArray> alive;  // a freed buffer would come back from the pool at the same address
  for (int request = 0; request < 3; ++request) {
    NDArray x = filled(10.0f * static_cast<float>(request + 2)), out = filled(-1);
    alive.push_back(x);
    alive.push_back(out);
    Counts before;
    LogCapture log;
    c.ex->set_input_zero_copy(0, x.handle());
    c.ex->set_output_zero_copy(0, out.handle());
    // x: inc1's argument 0 and sum's argument 1; out: sum's argument 2.
    EXPECT_EQ(state()->node_updates, before.updates + 3);
    if (request > 0) std::memset(c.out->data, 0, c.out.nbytes());  // the previous output must stay untouched
    c.ex->run();
    EXPECT_TRUE(c.ex->device_graph_active());
    EXPECT_EQ(state()->graph_launches, before.replays + 1);
    EXPECT_EQ(state()->launches, before.launches) << "a plain run happened";
    EXPECT_EQ(state()->captured_launches, before.captured) << "the graph was captured again";
    EXPECT_TRUE(warnings.empty()) << warnings[0];
    expect_model_output(x, out);
    for (int i = 0; i < kN && request > 0; ++i) ASSERT_EQ(at(c.out, i), 0.0f);
    EXPECT_EQ(seen["add"], (std::vector<uint64_t>{seen["add"][0], address(x), address(out)}));
    EXPECT_NE(seen["add"][0], address(out)) << "t2 was moved with the output";
    EXPECT_NE(seen["add_one"][0], address(out)) << "t1 (inc2's input) was moved with the output";
    c.out = out;
  }
}

// The graph was captured before the input changed its values in place: a
// replay reads the buffer at run time.
TEST(CudaZeroCopyGraph, ReplayReadsTheInputAtRunTime) {
  cuda_test::init();
  define_kernels();
  Captured c;
  c.ex->run();
  for (int i = 0; i < kN; ++i) static_cast<float*>(c.x->data)[i] = -3.0f * static_cast<float>(i);
  Counts before;
  c.ex->run();
  EXPECT_EQ(state()->graph_launches, before.replays + 1);
  expect_model_output(c.x, c.out);
}

// The driver refuses an update: the graph (possibly half updated) is
// dropped, the reason logged once, and the next run is a plain run and a
// new capture with the new buffers; later runs replay that.
TEST(CudaZeroCopyGraph, RefusedUpdateCapturesAgain) {
  cuda_test::init();
  define_kernels();
  Captured c;
  ASSERT_TRUE(c.ex->device_graph_active());
  NDArray x = filled(5), out = filled(-1);
  {
    LogCapture log;
    state()->refuse_node_updates = FAKE_CUDA_ERROR_INVALID_VALUE;
    c.ex->set_input_zero_copy(0, x.handle());
    state()->refuse_node_updates = 0;
    EXPECT_FALSE(c.ex->device_graph_active());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("cuGraphExecKernelNodeSetParams"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("captures again"), std::string::npos) << warnings[0];
  }
  c.ex->set_output_zero_copy(0, out.handle());
  Counts before;
  c.ex->run();
  EXPECT_EQ(state()->launches, before.launches + 3);
  EXPECT_EQ(state()->captured_launches, before.captured + 3);
  EXPECT_EQ(state()->graph_launches, before.replays);
  EXPECT_TRUE(c.ex->device_graph_active());
  expect_model_output(x, out);
  std::memset(out->data, 0, out.nbytes());
  c.ex->run();
  EXPECT_EQ(state()->graph_launches, before.replays + 1);
  expect_model_output(x, out);
}

// One buffer given as both input and output: node 'sum' then has two
// tensors at one address, so a later move of either cannot be told apart
// by address. No node is updated; the graph is captured again.
TEST(CudaZeroCopyGraph, OneBufferForTwoTensorsCapturesAgain) {
  cuda_test::init();
  define_kernels();
  Captured c;
  NDArray shared = filled(3);
  c.ex->set_input_zero_copy(0, shared.handle());
  c.ex->set_output_zero_copy(0, shared.handle());  // out = (x + 2) + x, in place
  c.ex->run();
  ASSERT_TRUE(c.ex->device_graph_active());
  NDArray x = filled(7);
  Counts before;
  LogCapture log;
  c.ex->set_input_zero_copy(0, x.handle());
  EXPECT_EQ(state()->node_updates, before.updates);
  EXPECT_FALSE(c.ex->device_graph_active());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("node 'sum' has another tensor at the same address"), std::string::npos) << warnings[0];
  c.ex->run();
  EXPECT_EQ(state()->captured_launches, before.captured + 3);
  expect_model_output(x, shared);
}

namespace {
std::vector<uint64_t> mlp_addresses;
void record_mlp_kernel(void** p, const unsigned*, const unsigned*) {
  for (int i = 0; i < FAKE_CUDA_MAX_PARAMS; ++i) mlp_addresses.push_back(param<uint64_t>(p, i));
}
std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
bool contains(const std::vector<uint64_t>& v, uint64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace

// The mlp_cuda model (TVM-built host code, 4 kernels, its output reusing an
// intermediate's storage): new zero-copy buffers are followed by updates and
// one replay, whose kernels are given the new addresses.
TEST(CudaZeroCopyGraph, MlpCudaFollowsNewBuffers) {
  GRAPHRT_REQUIRE_FIXTURES();
  cuda_test::init();
  auto fixture = [](const std::string& rel) { return graphrt_test::fixture_path("mlp_cuda/" + rel); };
  Module lib = load_module(fixture("deploy_lib.so"));
  CudaModuleNode* kernels = cuda_test::find_cuda_module(lib);
  ASSERT_NE(kernels, nullptr);
  auto define = cuda_fake::entry<decltype(&fake_cuda_define_kernel)>("fake_cuda_define_kernel");
  for (const auto& entry : kernels->image().fmap) {
    std::vector<int> sizes;
    for (DLDataType t : entry.second.arg_types) sizes.push_back(t.code == kDLOpaqueHandle || t.bits == 64 ? 8 : 4);
    define(entry.first.c_str(), static_cast<int>(sizes.size()), sizes.data(), record_mlp_kernel);
  }
  GraphExecutorOptions options;
  options.device_graph = true;
  auto ex = GraphExecutor::create(read_text(fixture("deploy_graph.json")), lib, {kGpu0}, options);
  ex->load_params(read_text(fixture("deploy_params.params")));
  auto fresh = [](const std::vector<int64_t>& shape) { return NDArray::empty(shape, kF32, kGpu0); };
  const DLTensor* in = ex->get_input(ex->input_index("data")).handle();
  std::vector<int64_t> in_shape(in->shape, in->shape + in->ndim);
  std::vector<int64_t> out_shape = ex->output_info()[0].shape;
  // The output stays in the executor's storage (shared with an intermediate)
  // until the first move.
  std::vector<NDArray> alive = {fresh(in_shape)};  // a freed buffer would come back from the pool
  ex->set_input_zero_copy(ex->input_index("data"), alive[0].handle());
  ex->run();
  ASSERT_TRUE(ex->device_graph_active());
  for (int request = 0; request < 2; ++request) {
    NDArray x = fresh(in_shape), out = fresh(out_shape);
    alive.push_back(x);
    alive.push_back(out);
    Counts before;
    ex->set_input_zero_copy(ex->input_index("data"), x.handle());
    ex->set_output_zero_copy(0, out.handle());
    EXPECT_GE(state()->node_updates, before.updates + 2);
    mlp_addresses.clear();
    ex->run();
    EXPECT_TRUE(ex->device_graph_active());
    EXPECT_EQ(state()->graph_launches, before.replays + 1);
    EXPECT_EQ(state()->launches, before.launches);
    EXPECT_EQ(state()->captured_launches, before.captured);
    EXPECT_TRUE(contains(mlp_addresses, address(x)));
    EXPECT_TRUE(contains(mlp_addresses, address(out)));
  }
}
