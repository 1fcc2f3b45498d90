// vm.builtin.cuda_graph.get_cached_alloc / run_or_capture on hand-built
// executables shaped as TVM's RewriteCUDAGraph leaves a model: main gets the
// region's storages from get_cached_alloc, then runs the region (a kernel that
// adds 1) through run_or_capture.
//
// On the host the region runs at every call. On a VM whose first device can
// capture (a recording device API registered here for kDLExtDev, which acts
// as CUDA does: while capturing, the kernel's work is recorded with its
// addresses instead of done, and a launch replays it) the region runs once,
// is captured once, and later calls replay the graph: the kernel's body is not
// called again, yet the outputs follow the new input values.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "graphrt/device_api.h"
#include "graphrt/error.h"
#include "graphrt/packed_func.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "backends/relax/packed_convention.h"
#include "relax_builder.h"

namespace {

using namespace graphrt::relax;
using namespace graphrt_test;
using graphrt::NDArray;

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDevice kRecorder{kDLExtDev, 0};

// Host memory that can "capture": work a kernel issues while capturing is
// recorded, and capture_launch replays it.
class RecordingDevice : public graphrt::DeviceAPI {
 public:
  using Work = std::function<void()>;
  struct Graph {
    std::vector<Work> work;
  };
  void* alloc(DLDevice, size_t nbytes, size_t) override { return std::aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64); }
  void free(DLDevice, void* p) override { std::free(p); }
  void copy(const DLTensor* from, DLTensor* to, void*) override {
    std::memcpy(static_cast<char*>(to->data) + to->byte_offset, static_cast<const char*>(from->data) + from->byte_offset,
                graphrt::tensor_nbytes(from));
  }
  void* alloc_workspace(DLDevice d, size_t n) override { return alloc(d, n, 64); }
  void free_workspace(DLDevice d, void* p) override { free(d, p); }
  void capture_begin(DLDevice) override {
    if (capturing) throw graphrt::Error(graphrt::ErrorKind::kFailedPrecondition, "already capturing");
    if (refuse_capture) throw graphrt::Error(graphrt::ErrorKind::kUnsupported, "this recorder refuses to capture");
    capturing = new Graph();
    ++begins;
  }
  void* capture_end(DLDevice) override {
    Graph* g = capturing;
    capturing = nullptr;
    return g;
  }
  void capture_launch(DLDevice, void* graph) override {
    ++launches;
    for (Work& w : static_cast<Graph*>(graph)->work) w();
  }
  void capture_free(DLDevice, void* graph) override {
    ++frees;
    delete static_cast<Graph*>(graph);
  }
  // Runs `work` now, or records it while capturing.
  void issue(Work work) {
    if (capturing) {
      capturing->work.push_back(std::move(work));
    } else {
      work();
    }
  }

  Graph* capturing = nullptr;
  bool refuse_capture = false;
  int begins = 0, launches = 0, frees = 0;
};

RecordingDevice* recorder() {
  static RecordingDevice* d = [] {
    auto api = std::make_shared<RecordingDevice>();
    graphrt::register_device_api(kDLExtDev, api);
    return api.get();
  }();
  return d;
}

int kernel_calls = 0;  // the kernel's body (issuing its work), not the work itself
int alloc_calls = 0;

// test.add_one(x, out): out = x + 1, issued on the tensor's device (recorded while capturing).
void register_test_functions() {
  static const bool once = [] {
    graphrt::registry_set("test.cuda_graph.add_one", graphrt::make_function([](const graphrt::TVMArgs& args, graphrt::RetValue*) {
      ++kernel_calls;
      const DLTensor* x = args.as_tensor(0);
      const DLTensor* out = args.as_tensor(1);
      const float* in = static_cast<const float*>(x->data);
      float* o = static_cast<float*>(out->data);
      const int64_t n = x->shape[0];
      auto work = [in, o, n] {
        for (int64_t i = 0; i < n; ++i) o[i] = in[i] + 1.0f;
      };
      if (x->device.device_type == kDLExtDev) {
        recorder()->issue(work);
      } else {
        work();
      }
    }));
    return true;
  }();
  (void)once;
}

// main(x): storages = get_cached_alloc(alloc, 0); run_or_capture(region, (storage, x), entry[, shape]).
//   alloc():           (alloc_storage(16 bytes on device 0),)
//   region(s, x):      out = alloc_tensor(s, 0, (4,), f32); add_one(x, out); (out,)
graphrt::Module region_program(bool with_shape_expr, int64_t entry_index = 0) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t alloc = b.function("alloc", FunctionKind::kVMFunc);
  const int64_t region = b.function("region", FunctionKind::kVMFunc);
  const int64_t cached = b.function("vm.builtin.cuda_graph.get_cached_alloc");
  const int64_t run_capture = b.function("vm.builtin.cuda_graph.run_or_capture");
  const int64_t storage = b.function("vm.builtin.alloc_storage");
  const int64_t tensor = b.function("vm.builtin.alloc_tensor");
  const int64_t getitem = b.function("vm.builtin.tuple_getitem");
  const int64_t tuple = b.function("vm.builtin.make_tuple");
  const int64_t add_one = b.function("test.cuda_graph.add_one");
  const int64_t f32 = b.constant(kF32);
  const int64_t shape4 = b.constant(make_shape({4}));
  b.begin(main, {"x"}, 5);
  b.call(1, cached, {kVm, fn(alloc), imm(entry_index)});
  b.call(2, getitem, {reg(1), imm(0)});
  b.call(3, tuple, {reg(2), reg(0)});
  if (with_shape_expr) {
    b.call(4, run_capture, {kVm, fn(region), reg(3), imm(entry_index), b.constant(make_shape({4}))});
  } else {
    b.call(4, run_capture, {kVm, fn(region), reg(3), imm(entry_index)});
  }
  b.ret(4);
  b.begin(alloc, {}, 2);
  b.call(0, storage, {kVm, b.constant(make_shape({16})), imm(0), f32, b.constant(std::make_shared<const std::string>("global"))});
  b.call(1, tuple, {reg(0)});
  b.ret(1);
  b.begin(region, {"s", "x"}, 4);
  b.call(2, tensor, {reg(0), imm(0), shape4, f32});
  b.call(kVoidRegister, add_one, {reg(1), reg(2)});
  b.call(3, tuple, {reg(2)});
  b.ret(3);
  return b.vm();
}

void initialize(graphrt::Module vm, DLDevice first) {
  graphrt::ArgList args;
  args.add_int(first.device_type).add_int(first.device_id).add_int(2);
  if (first.device_type != kDLCPU) args.add_int(kDLCPU).add_int(0).add_int(2);
  graphrt::call_function(vm->require_function("vm_initialization"), args);
}

NDArray input(DLDevice dev, std::vector<float> values) {
  NDArray x = NDArray::empty({4}, kF32, dev);
  std::memcpy(x->data, values.data(), 16);
  return x;
}

void set(const NDArray& x, std::vector<float> values) { std::memcpy(x->data, values.data(), 16); }

NDArray only_output(const Value& v) {
  const auto& items = std::get<graphrt::Ref<TupleObj>>(v)->items;
  EXPECT_EQ(items.size(), 1u);
  return std::get<NDArray>(items[0]);
}

std::vector<float> values(const NDArray& a) {
  const float* p = static_cast<const float*>(a->data);
  return std::vector<float>(p, p + 4);
}

class CudaGraphBuiltins : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_functions();
    kernel_calls = 0;
    RecordingDevice* r = recorder();
    r->refuse_capture = false;
    r->begins = r->launches = r->frees = 0;
  }
};

TEST_F(CudaGraphBuiltins, HostVmRunsTheRegionEveryCallWithCachedStorage) {
  graphrt::Module vm = region_program(false);
  initialize(vm, graphrt::cpu());
  NDArray x = input(graphrt::cpu(), {1, 2, 3, 4});
  const NDArray first = only_output(run(vm, {x}));
  EXPECT_EQ(values(first), (std::vector<float>{2, 3, 4, 5}));
  set(x, {10, 20, 30, 40});
  const NDArray second = only_output(run(vm, {x}));
  EXPECT_EQ(values(second), (std::vector<float>{11, 21, 31, 41}));
  EXPECT_EQ(kernel_calls, 2);              // no replay on the host
  EXPECT_EQ(first->data, second->data);    // the same cached storage
  EXPECT_EQ(recorder()->begins, 0);
}

TEST_F(CudaGraphBuiltins, GetCachedAllocCallsTheAllocatorOncePerEntryAndVm) {
  alloc_calls = 0;
  graphrt::registry_set("test.cuda_graph.alloc", graphrt::make_function([](const graphrt::TVMArgs&, graphrt::RetValue* ret) {
    ++alloc_calls;
    ret->set_ndarray(NDArray::empty({alloc_calls}, kF32, graphrt::cpu()));
  }));
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t cached = b.function("vm.builtin.cuda_graph.get_cached_alloc");
  const int64_t alloc = b.function("test.cuda_graph.alloc");
  const int64_t tuple = b.function("vm.builtin.make_tuple");
  b.begin(main, {}, 4);
  b.call(0, cached, {kVm, fn(alloc), imm(0)});
  b.call(1, cached, {kVm, fn(alloc), imm(7)});
  b.call(2, cached, {kVm, fn(alloc), imm(0)});
  b.call(3, tuple, {reg(0), reg(1), reg(2)});
  b.ret(3);
  graphrt::Module vm = b.vm();
  const auto out = std::get<graphrt::Ref<TupleObj>>(run(vm, {}))->items;
  EXPECT_EQ(alloc_calls, 2);  // entries 0 and 7
  EXPECT_EQ(std::get<NDArray>(out[0]).shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(std::get<NDArray>(out[1]).shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(std::get<NDArray>(out[0])->data, std::get<NDArray>(out[2])->data);
  run(vm, {});
  EXPECT_EQ(alloc_calls, 2);  // kept from call to call
  // Another VM of the same executable has its own cache.
  graphrt::Module other = b.vm();
  run(other, {});
  EXPECT_EQ(alloc_calls, 4);
}

TEST_F(CudaGraphBuiltins, DeviceVmCapturesOnceThenReplays) {
  for (bool with_shape : {false, true}) {
    SCOPED_TRACE(with_shape ? "with shape_expr" : "without shape_expr");
    kernel_calls = 0;
    RecordingDevice* r = recorder();
    r->begins = r->launches = r->frees = 0;
    {
      graphrt::Module vm = region_program(with_shape);
      initialize(vm, kRecorder);
      NDArray x = input(kRecorder, {1, 2, 3, 4});
      const NDArray first = only_output(run(vm, {x}));
      EXPECT_EQ(values(first), (std::vector<float>{2, 3, 4, 5}));  // the warm-up run's work
      EXPECT_EQ(kernel_calls, 2);                                  // warm-up and capture
      EXPECT_EQ(r->begins, 1);
      for (float base : {10.0f, 100.0f}) {
        set(x, {base, base + 1, base + 2, base + 3});
        const NDArray out = only_output(run(vm, {x}));
        EXPECT_EQ(values(out), (std::vector<float>{base + 1, base + 2, base + 3, base + 4}));
        EXPECT_EQ(out->data, first->data);
      }
      EXPECT_EQ(kernel_calls, 2);  // replays only
      EXPECT_EQ(r->launches, 2);
      EXPECT_EQ(r->frees, 0);
    }
    EXPECT_EQ(r->frees, 1);  // the graph goes with its VM
  }
}

TEST_F(CudaGraphBuiltins, DeviceThatCannotCaptureRunsTheRegionEveryCall) {
  recorder()->refuse_capture = true;
  graphrt::Module vm = region_program(false);
  initialize(vm, kRecorder);
  NDArray x = input(kRecorder, {1, 2, 3, 4});
  EXPECT_EQ(values(only_output(run(vm, {x}))), (std::vector<float>{2, 3, 4, 5}));
  set(x, {5, 6, 7, 8});
  EXPECT_EQ(values(only_output(run(vm, {x}))), (std::vector<float>{6, 7, 8, 9}));
  EXPECT_EQ(kernel_calls, 2);
  EXPECT_EQ(recorder()->launches, 0);
}

void expect_error(const std::vector<int64_t>& call_args, int expected_argument, const char* text) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t region = b.function("region", FunctionKind::kVMFunc);
  const int64_t run_capture = b.function("vm.builtin.cuda_graph.run_or_capture");
  b.begin(main, {"x"}, 2);
  std::vector<int64_t> args = {kVm};
  for (int64_t a : call_args) args.push_back(a == -1 ? fn(region) : a);
  b.call(1, run_capture, args);
  b.ret(1);
  b.begin(region, {}, 1);
  b.ret(0);
  try {
    run(b.vm(), {int64_t{3}});
    FAIL() << "no error for " << text;
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("builtin"), "vm.builtin.cuda_graph.run_or_capture") << e.what();
    if (expected_argument >= 0) {
      EXPECT_EQ(e.context_value("argument"), std::to_string(expected_argument)) << e.what();
    }
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST_F(CudaGraphBuiltins, RefusesBadArgumentsNamingThem) {
  expect_error({-1, reg(0)}, -1, "takes (vm, capture_func, args, entry_index[, shape_expr])");
  expect_error({reg(0), reg(0), imm(0)}, 1, "capture_func");
  expect_error({-1, reg(0), imm(0)}, 2, "args");
}

}  // namespace
