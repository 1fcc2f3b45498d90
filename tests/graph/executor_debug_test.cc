// Node-level execution and timing (the debug executor's interface) and the
// time evaluator, on real fixtures.
#include <cstring>

#include "fixture_cases.h"
#include "graphrt/graph_json.h"
#include "graphrt/registry.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

TimingOptions quick(int repeat) {
  TimingOptions o;
  o.number = 2;
  o.repeat = repeat;
  return o;
}

}  // namespace

TEST(ExecutorDebug, NodeByNodeGivesTheFixtureOutputs) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const std::string name : {"multi_io", "mlp", "squeezenet1.1"}) {
    auto ex = three_file_executor(name);
    set_case_inputs(*ex, name);
    for (int i = 0; i < ex->num_nodes(); ++i) ex->execute_node(i);
    double tolerance = case_json(name).value("tolerance", 0.0);
    const GraphDef& g = ex->graph();
    for (size_t i = 0; i < g.heads.size(); ++i) {
      NDArray got = ex->node_output(static_cast<int>(g.heads[i].node_id), static_cast<int>(g.heads[i].index));
      EXPECT_EQ(compare_output(got, fixture_path(name + "/output_" + std::to_string(i) + ".npy"), tolerance), "")
          << name << " output " << i;
    }
  }
}

TEST(ExecutorDebug, ExecuteNodeRunsOnlyTheNodesUpToIt) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("multi_io");
  set_case_inputs(*ex, "multi_io");
  int sum_node = ex->node_index("tvmgen_default_fused_sum");
  ASSERT_GE(sum_node, 0);
  NDArray sum = ex->node_output(sum_node, 0);
  std::vector<float> marker(static_cast<size_t>(sum.nbytes() / 4), -7.0f);
  sum.copy_from_bytes(marker.data(), sum.nbytes());
  ex->execute_node(sum_node - 1);  // everything before the sum: its output keeps the marker
  std::vector<float> after(marker.size());
  sum.copy_to_bytes(after.data(), sum.nbytes());
  EXPECT_EQ(after, marker);
  ex->execute_node(sum_node);
  sum.copy_to_bytes(after.data(), sum.nbytes());
  EXPECT_NE(after, marker);
  EXPECT_EQ(compare_output(sum, fixture_path("multi_io/output_1.npy"), 0), "");
}

TEST(ExecutorDebug, TimesEveryNode) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("mlp");
  set_case_inputs(*ex, "mlp");
  std::vector<std::vector<double>> seconds = ex->time_nodes(quick(3));
  const GraphDef& g = ex->graph();
  ASSERT_EQ(seconds.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ASSERT_EQ(seconds[i].size(), 3u);
    bool has_kernel = g.nodes[i].op == "tvm_op" && g.nodes[i].func_name != "__nop";
    for (double s : seconds[i]) {
      if (has_kernel) {
        EXPECT_GT(s, 0.0) << g.nodes[i].name;
      } else {
        EXPECT_EQ(s, 0.0) << g.nodes[i].name;
      }
    }
  }
  // timing leaves the outputs right
  ex->run();
  EXPECT_EQ(compare_output(ex->get_output(0), fixture_path("mlp/output_0.npy"), 0), "");
}

TEST(ExecutorDebug, BadNodesGiveClearErrors) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("multi_io");
  EXPECT_NE(error_of([&] { ex->execute_node(ex->num_nodes()); }).find("out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { ex->node_output(-1, 0); }).find("out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { ex->node_output(0, 1); }).find("has 1 outputs"), std::string::npos);
  TimingOptions none = quick(0);
  EXPECT_NE(error_of([&] { ex->time_nodes(none); }).find("number and repeat"), std::string::npos);
  EXPECT_EQ(ex->node_index("no_such_node"), -1);
}

TEST(TimeEvaluator, TimesAModuleFunctionWithItsArguments) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("mlp");
  Module mod = make_graph_executor_module(ex);
  PackedFunc make = registry_get("runtime.RPCTimeEvaluator");
  ASSERT_TRUE(make);
  ArgList args;
  args.add_module(mod).add_string("set_input").add_int(kDLCPU).add_int(0);
  for (int64_t v : {3, 4, 1, 100, 0, 1, 1024}) args.add_int(v);  // number .. cache_flush_bytes
  args.add_string("");
  PackedFunc timer = call_function(make, args).as_function();
  NDArray x = npy_to_ndarray(read_npy(fixture_path("mlp/input_data.npy")));
  ArgList call;
  call.add_string("data").add_ndarray(x);
  std::string blob = call_function(timer, call).as_string();
  ASSERT_EQ(blob.size(), 4 * sizeof(double));
  for (int i = 0; i < 4; ++i) {
    double s;
    std::memcpy(&s, blob.data() + i * sizeof(double), sizeof(s));
    EXPECT_GT(s, 0.0);
  }
  std::vector<float> want(x.nbytes() / 4), got(want.size());
  x.copy_to_bytes(want.data(), x.nbytes());
  ex->get_input(ex->input_index("data")).copy_to_bytes(got.data(), x.nbytes());
  EXPECT_EQ(got, want);
}

TEST(TimeEvaluator, RejectsBadRequests) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module mod = make_graph_executor_module(three_file_executor("mlp"));
  PackedFunc make = registry_get("runtime.RPCTimeEvaluator");
  auto request = [&](const std::string& fn, int64_t number, const std::string& preproc) {
    ArgList args;
    args.add_module(mod).add_string(fn).add_int(kDLCPU).add_int(0);
    for (int64_t v : {number, int64_t{1}, int64_t{0}, int64_t{100}, int64_t{0}, int64_t{1}, int64_t{0}}) args.add_int(v);
    args.add_string(preproc);
    return error_of([&] { call_function(make, args); });
  };
  EXPECT_NE(request("no_such_function", 1, "").find("no_such_function"), std::string::npos);
  EXPECT_NE(request("run", 0, "").find("number and repeat"), std::string::npos);
  EXPECT_NE(request("run", 1, "no.such.preproc").find("no.such.preproc"), std::string::npos);
}
