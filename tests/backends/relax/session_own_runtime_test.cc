// A Session over a runtime of its own reaches nothing of the process's default
// runtime while it loads and runs graph and Relax exports on the CPU: the blob's
// record loaders, the device APIs, the executors' and VMs' functions all come
// from the session's runtime. Its own process: the default runtime is never
// built here until the test's end, so any look-up in it (runtime(),
// registry_get, device_api(dev), ...) would have built it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/session.h"
#include "own_runtime_support.h"
#include "test_support.h"

namespace {

using namespace graphrt;
using graphrt_test::CountingCpu;

// Replaces `runtime`'s function `name` by one that counts its calls, then calls it.
void count_calls(Runtime& runtime, const std::string& name, std::atomic<int>* calls) {
  PackedFunc real = runtime.function(name);
  ASSERT_TRUE(real) << name;
  runtime.set_function(name, make_function([real, calls](const TVMArgs& args, RetValue* ret) {
    ++*calls;
    real->call(args, ret);
  }, name));
}

// An .npy file's array, over the bytes read (no allocation: no device API is asked).
struct Input {
  explicit Input(const std::string& path) : npy(graphrt_test::read_npy(graphrt_test::fixture_path(path))) {
    array = NDArray::wrap(npy.data.data(), npy.shape, npy.dtype, cpu(), nullptr);
  }
  graphrt_apps::NpyArray npy;
  NDArray array;
};

void expect_output(const Runner& runner, int index, const std::string& path) {
  const graphrt_apps::NpyArray want = graphrt_test::read_npy(graphrt_test::fixture_path(path));
  const NDArray got = runner.output(index);
  ASSERT_EQ(want.data.size(), got.nbytes()) << path;
  EXPECT_EQ(0, std::memcmp(want.data.data(), got->data, want.data.size())) << path;
}

ModelSource source(const std::string& path, const std::string& graph = "", const std::string& params = "") {
  return ModelSource{graphrt_test::fixture_path(path), graph.empty() ? "" : graphrt_test::fixture_path(graph),
                     params.empty() ? "" : graphrt_test::fixture_path(params), ""};
}

class SessionOwnRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    // Before anything could have built the default runtime: from now on, building it says so.
    install_default_runtime_factory(&graphrt_test::flagging_default_runtime_factory);
    own_ = graphrt_test::compose_own_runtime();
    own_->register_device_api(kDLCPU, cpu_);
    count_calls(*own_, "runtime.module.loadbinary_GraphExecutorFactory", &factories_);
    count_calls(*own_, "runtime.module.loadbinary_relax.VMExecutable", &relax_records_);
    count_calls(*own_, "ffi.Module.load_from_bytes.relax.VMExecutable", &relax_bytes_);
  }

  std::shared_ptr<CountingCpu> cpu_ = std::make_shared<CountingCpu>();
  std::atomic<int> factories_{0}, relax_records_{0}, relax_bytes_{0};
  std::unique_ptr<Runtime> own_;  // outlives the models below (declared before them in the test)
};

TEST_F(SessionOwnRuntime, GraphAndRelaxExportsLoadAndRunOnTheSessionsRuntimeAlone) {
  GRAPHRT_REQUIRE_FIXTURES();
  Session session(*own_, cpu());
  {  // one-file graph export: the factory record read by the session's loader, the executor's
     // storage from the session's CPU
    std::shared_ptr<Model> model = session.load(source("mlp/deploy_factory.so"));
    EXPECT_EQ(1, factories_.load());
    const int allocs = cpu_->allocs();
    EXPECT_GT(allocs, 0);
    std::unique_ptr<Runner> runner = model->runner();
    Input x("mlp/input_data.npy");
    runner->set_input("data", x.array.handle());
    runner->run();
    expect_output(*runner, 0, "mlp/output_0.npy");
    EXPECT_TRUE(cpu_->holds(runner->output(0)->data, runner->output(0).nbytes()));
    std::unique_ptr<Runner> second = model->runner();  // a new executor, on the same CPU API
    EXPECT_GT(cpu_->allocs(), allocs);
  }
  {  // three-file form: the kernels library's executor made on the session's devices
    const int allocs = cpu_->allocs();
    std::shared_ptr<Model> model =
        session.load(source("mlp/deploy_lib.so", "mlp/deploy_graph.json", "mlp/deploy_params.params"));
    EXPECT_GT(cpu_->allocs(), allocs);
    std::unique_ptr<Runner> runner = model->runner();
    Input x("mlp/input_data.npy");
    runner->set_input("data", x.array.handle());
    runner->run();
    expect_output(*runner, 0, "mlp/output_0.npy");
    EXPECT_TRUE(cpu_->holds(runner->output(0)->data, runner->output(0).nbytes()));
  }
  // Relax, both ABIs: TVM v0.20's blob record and v0.26's (tvm-ffi) module bytes; the tuple
  // result read through the session's functions. (Kernels that take workspace memory, such as
  // the MLP cases', reach the default runtime through TVMBackendAllocWorkspace, which names no
  // runtime: this case's kernels take none.)
  for (const std::string dir : {"relax/relax_tuple_io", "relax-ffi/relax_tuple_io"}) {
    SCOPED_TRACE(dir);
    const int records = relax_records_.load(), bytes = relax_bytes_.load();
    std::shared_ptr<Model> model = session.load(source(dir + "/deploy_relax.so"));
    EXPECT_EQ(1, relax_records_.load() - records + relax_bytes_.load() - bytes);  // one executable read
    std::unique_ptr<Runner> runner = model->runner();
    Input x(dir + "/input_x.npy"), y(dir + "/input_y.npy");
    const int allocs = cpu_->allocs();
    runner->set_input("x", x.array.handle());  // copies on the session's CPU
    runner->set_input("y", y.array.handle());
    EXPECT_EQ(allocs + 2, cpu_->allocs());
    runner->run();
    ASSERT_EQ(3, runner->num_outputs());
    for (int i = 0; i < 3; ++i) expect_output(*runner, i, dir + "/output_" + std::to_string(i) + ".npy");
  }
  EXPECT_EQ(1, relax_records_.load());  // the v0.20 export's record
  EXPECT_EQ(1, relax_bytes_.load());    // the v0.26 export's module bytes
  EXPECT_FALSE(graphrt_test::default_runtime_built()) << "a load or run through the session reached the default runtime";
  // The check above means something only if the default runtime did not exist before the
  // test: building it now must run the factory the test installed.
  runtime();
  EXPECT_TRUE(graphrt_test::default_runtime_built()) << "the default runtime existed before the test began: nothing was checked";
}

}  // namespace
