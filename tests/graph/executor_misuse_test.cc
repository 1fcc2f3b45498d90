// The graph executor refuses what would otherwise compute garbage: a graph placed on a device
// it was not given, a run with inputs or params never set, outputs read before any run.
#include <functional>

#include "fixture_cases.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

std::shared_ptr<GraphExecutor> without_params(const std::string& name, DLDevice dev = cpu()) {
  return create_graph_executor(read_text(fixture_path(name + "/deploy_graph.json")),
                               load_module(fixture_path(name + "/deploy_lib.so")), "", {dev});
}

}  // namespace

TEST(ExecutorMisuse, CudaGraphOnCpuSaysItWantsCuda) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::string msg = error_of([] { without_params("mlp_cuda"); });
  EXPECT_NE(msg.find("the graph wants a CUDA device (its device_index attrs place 12 tensors on cuda) but was given cpu(0)"),
            std::string::npos)
      << msg;
  Module factory = load_module(fixture_path("mlp_cuda/deploy_factory.so"));
  msg = error_of([&] { call_function(factory->require_function("default"), ArgList().add_device(cpu())); });
  EXPECT_NE(msg.find("wants a CUDA device"), std::string::npos) << msg;
}

TEST(ExecutorMisuse, CpuGraphOnCudaOnlySaysItWantsCpu) {
  GRAPHRT_REQUIRE_FIXTURES();
  // Checked before any allocation, so this holds with or without a GPU.
  std::string msg = error_of([] { without_params("mlp", DLDevice{kDLCUDA, 0}); });
  EXPECT_NE(msg.find("the graph wants a CPU device"), std::string::npos) << msg;
  EXPECT_NE(msg.find("option: device=cpu"), std::string::npos) << msg;  // the apps name their flag
  EXPECT_EQ(msg.find("--"), std::string::npos) << msg;
}

TEST(ExecutorMisuse, RunWithoutParamsNamesThemAndTheCall) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = without_params("mlp");
  set_case_inputs(*ex, "mlp");
  std::string msg = error_of([&] { ex->run(); });
  EXPECT_NE(msg.find("params not loaded: p0, p1, p2, p3, p4, p5; load them with load_params"), std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("inputs not set"), std::string::npos) << msg;
  EXPECT_NE(msg.find("option: params"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("--"), std::string::npos) << msg;
  ex->load_params(read_text(fixture_path("mlp/deploy_params.params")));
  ex->run();
  EXPECT_EQ("", compare_output(ex->get_output(0), fixture_path("mlp/output_0.npy"), 0));
}

TEST(ExecutorMisuse, RunBeforeInputsAndOutputsBeforeRun) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = create_graph_executor(read_text(fixture_path("multi_io/deploy_graph.json")),
                                  load_module(fixture_path("multi_io/deploy_lib.so")),
                                  read_text(fixture_path("multi_io/deploy_params.params")), {cpu()});
  EXPECT_NE(error_of([&] { ex->get_output(0); }).find("output 0 read before run()"), std::string::npos);
  NDArray host = NDArray::empty(ex->output_info()[1].shape, ex->output_info()[1].dtype, cpu());
  EXPECT_NE(error_of([&] { ex->copy_output_to(1, host.handle()); }).find("output 1 read before run()"),
            std::string::npos);
  NDArray a = npy_to_ndarray(read_npy(fixture_path("multi_io/input_a.npy")));
  ex->set_input("a", a.handle());
  std::string msg = error_of([&] { ex->run(); });
  EXPECT_NE(msg.find("inputs not set: b; set them with set_input"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { ex->profile(1); }).find("inputs not set: b"), std::string::npos);
  set_case_inputs(*ex, "multi_io");
  ex->run();
  EXPECT_EQ("", compare_output(ex->get_output(2), fixture_path("multi_io/output_2.npy"), 0));
}

TEST(ExecutorMisuse, UnknownInputListsDataInputsBeforeParams) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = without_params("squeezenet1.1");
  NDArray x = NDArray::empty({1}, DLDataType{kDLFloat, 32, 1}, cpu());
  std::string msg = error_of([&] { ex->set_input("dat", x.handle()); });
  EXPECT_NE(msg.find("unknown input 'dat' (data inputs: data; params: p0, p1, p2, p3, p4, p5, p6, p7, ... p51 (52))"),
            std::string::npos)
      << msg;
}

TEST(ExecutorMisuse, ProfileWarmsUpAndTabulatesMeanAndTotal) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = without_params("mlp");
  ex->load_params(read_text(fixture_path("mlp/deploy_params.params")));
  set_case_inputs(*ex, "mlp");
  ProfileReport report = ex->profile(2, 3);
  EXPECT_EQ(report.runs, 2);
  EXPECT_EQ(report.warmup, 3);
  for (const NodeProfile& n : report.nodes) EXPECT_EQ(n.calls, 2) << n.node;
  std::string table = report.table();
  EXPECT_NE(table.find("mean (us)"), std::string::npos) << table;
  EXPECT_NE(table.find("total (us)"), std::string::npos) << table;
  EXPECT_NE(table.find("after 3 warm-up runs"), std::string::npos) << table;
  EXPECT_NE(table.find("  tvmgen_default_fused_nn_contrib_dense_pack_add_nn_relu_1\n"), std::string::npos) << table;
}

// A raw DLTensor (TVM's C ABI, GraphModule.set_input) with null data or shape, or a rank no
// tensor has, is an error naming the input, before the executor reads it; after a zero-copy
// input, a copied one goes to the executor's own storage, never into the memory lent.
TEST(ExecutorMisuse, RawTensorsThatLieAreRefusedAndLentMemoryIsNotWritten) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("multi_io");
  NDArray a = NDArray::empty({2, 3}, DLDataType{kDLFloat, 32, 1}, cpu());
  DLTensor t = *a.handle();
  t.data = nullptr;
  EXPECT_NE(error_of([&] { ex->set_input("a", &t); }).find("input 'a': null data"), std::string::npos);
  t = *a.handle();
  t.shape = nullptr;
  EXPECT_NE(error_of([&] { ex->set_input("a", &t); }).find("input 'a': null shape"), std::string::npos);
  t = *a.handle();
  t.ndim = 1 << 30;
  EXPECT_NE(error_of([&] { ex->set_input("a", &t); }).find("is not a rank"), std::string::npos);
  EXPECT_NE(error_of([&] { ex->set_input("a", nullptr); }).find("null tensor"), std::string::npos);

  NDArray lent = NDArray::empty({2, 3}, DLDataType{kDLFloat, 32, 1}, cpu());
  const std::vector<float> mine = {1, 2, 3, 4, 5, 6};
  lent.copy_from_bytes(mine.data(), 24);
  ex->set_input_zero_copy(ex->input_index("a"), lent.handle());
  const std::vector<float> zeros(6, 0.0f);
  a.copy_from_bytes(zeros.data(), 24);
  ex->set_input("a", a.handle());
  std::vector<float> after(6);
  lent.copy_to_bytes(after.data(), 24);
  EXPECT_EQ(after, mine) << "a copied input wrote into the memory lent before";
  NDArray bound = ex->get_input(ex->input_index("a"));
  EXPECT_NE(bound->data, lent->data);
}
