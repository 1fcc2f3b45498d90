// Concatenations done in place by the liveness plan: which nodes qualify,
// where their inputs land, and that a real model still gives TVM's outputs.
#include <atomic>
#include <vector>

#include "fixture_cases.h"
#include "graph/in_place_concat.h"
#include "graph/storage_plan.h"
#include "graphrt/graph_executor.h"
#include "graphrt/graph_json.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"
#include "graphrt/tvm_abi.h"

using namespace graphrt;
using namespace graphrt_test;

extern "C" int TVMBackendRegisterSystemLibSymbol(const char* name, void* ptr);

namespace {

// A one-output tvm_op node calling `func` on `inputs` ([node, index, version] triples).
nlohmann::json op_node(const std::string& name, const std::string& func, nlohmann::json inputs) {
  return nlohmann::json{{"op", "tvm_op"},
                        {"name", name},
                        {"inputs", inputs},
                        {"attrs", {{"func_name", func}, {"num_inputs", std::to_string(inputs.size())},
                                   {"num_outputs", "1"}, {"flatten_data", "0"}}}};
}

// x -> a = f(x), b = g(x) -> c = concatenate(a, b) -> y = h(c), all float32.
// `shape_a`/`shape_b`/`shape_c` are the three tensors' shapes.
nlohmann::json concat_graph(const std::string& concat_func, nlohmann::json shape_a, nlohmann::json shape_b,
                            nlohmann::json shape_c) {
  nlohmann::json g;
  g["nodes"] = {nlohmann::json{{"op", "null"}, {"name", "x"}, {"inputs", nlohmann::json::array()}},
                op_node("a", "f", {{0, 0, 0}}), op_node("b", "g", {{0, 0, 0}}), op_node("c", concat_func, {{1, 0, 0}, {2, 0, 0}}),
                op_node("y", "h", {{3, 0, 0}})};
  g["arg_nodes"] = {0};
  g["heads"] = {{4, 0, 0}};
  g["node_row_ptr"] = {0, 1, 2, 3, 4, 5};
  g["attrs"] = {{"dltype", {"list_str", {"float32", "float32", "float32", "float32", "float32"}}},
                {"shape", {"list_shape", {shape_c, shape_a, shape_b, shape_c, shape_c}}},
                {"storage_id", {"list_int", {0, 1, 2, 3, 4}}}};
  return g;
}

StoragePlan liveness_of(const nlohmann::json& g) { return plan_liveness(parse_graph_json(g.dump()), kDLCPU); }

bool concat_in_place(const nlohmann::json& g) {
  StoragePlan plan = liveness_of(g);
  return !plan.node_done_in_place.empty() && plan.node_done_in_place[3];
}

}  // namespace

TEST(InPlaceConcat, RecognizesTvmNamesOfALoneConcatenate) {
  for (const char* name : {"tvmgen_default_fused_concatenate", "tvmgen_default_fused_concatenate_1_2",
                           "fused_concatenate", "tvmgen_mynet_fused_concatenate_10"})
    EXPECT_TRUE(is_plain_concatenate(name)) << name;
  for (const char* name : {"tvmgen_default_fused_concatenate_add", "tvmgen_default_fused_nn_conv2d_concatenate",
                           "tvmgen_default_fused_concatenate_", "tvmgen_default_fused_concatenate__1",
                           "tvmgen_default_fused_concatenate_1_cast", "concatenate", "my_fused_concatenate_x"})
    EXPECT_FALSE(is_plain_concatenate(name)) << name;
}

TEST(InPlaceConcat, InputsLandInTheirSlicesOfTheOutput) {
  // Along axis 1 of [1, 16+48, 2]: slices of 128 and 384 bytes, both aligned.
  StoragePlan plan = liveness_of(concat_graph("tvmgen_default_fused_concatenate", {1, 16, 2}, {1, 48, 2}, {1, 64, 2}));
  ASSERT_FALSE(plan.node_done_in_place.empty());
  EXPECT_TRUE(plan.node_done_in_place[3]);
  EXPECT_FALSE(plan.node_done_in_place[1] || plan.node_done_in_place[2] || plan.node_done_in_place[4]);
  // Entries: 0 x, 1 a, 2 b, 3 c, 4 y.
  EXPECT_EQ(plan.entry_buffer[1], plan.entry_buffer[3]);
  EXPECT_EQ(plan.entry_buffer[2], plan.entry_buffer[3]);
  EXPECT_EQ(plan.entry_offset[1], plan.entry_offset[3]);
  EXPECT_EQ(plan.entry_offset[2], plan.entry_offset[3] + 16 * 2 * 4);
  // y is computed from c while c is live: they must not overlap.
  size_t c_begin = plan.entry_offset[3], c_end = c_begin + 64 * 2 * 4;
  size_t y_begin = plan.entry_offset[4], y_end = y_begin + 64 * 2 * 4;
  EXPECT_TRUE(y_end <= c_begin || c_end <= y_begin);
}

TEST(InPlaceConcat, LeavesNodesWhoseInputsAreNotPlainSlices) {
  const std::string concat = "tvmgen_default_fused_concatenate";
  EXPECT_TRUE(concat_in_place(concat_graph(concat, {1, 16, 2}, {1, 48, 2}, {1, 64, 2})));
  // Not a lone concatenate.
  EXPECT_FALSE(concat_in_place(concat_graph(concat + "_add", {1, 16, 2}, {1, 48, 2}, {1, 64, 2})));
  // Axis 1 with a batch of 2: each input is two separate blocks.
  EXPECT_FALSE(concat_in_place(concat_graph(concat, {2, 16, 2}, {2, 48, 2}, {2, 64, 2})));
  // The second slice would start 12 bytes in: not 64-byte aligned.
  EXPECT_FALSE(concat_in_place(concat_graph(concat, {1, 3}, {1, 5}, {1, 8})));
  // Shapes that are no concatenation of the inputs.
  EXPECT_FALSE(concat_in_place(concat_graph(concat, {1, 16, 2}, {1, 48, 2}, {1, 80, 2})));
  EXPECT_FALSE(concat_in_place(concat_graph(concat, {1, 16, 2}, {1, 48, 3}, {1, 64, 2})));

  nlohmann::json output_input = concat_graph(concat, {1, 16, 2}, {1, 48, 2}, {1, 64, 2});
  output_input["heads"].push_back({1, 0, 0});  // a is also a graph output
  EXPECT_FALSE(concat_in_place(output_input));

  nlohmann::json concat_is_output = concat_graph(concat, {1, 16, 2}, {1, 48, 2}, {1, 64, 2});
  concat_is_output["heads"] = {{3, 0, 0}};  // set_output_zero_copy could move it
  EXPECT_FALSE(concat_in_place(concat_is_output));

  nlohmann::json same_twice = concat_graph(concat, {1, 32, 2}, {1, 32, 2}, {1, 64, 2});
  same_twice["nodes"][3]["inputs"] = {{1, 0, 0}, {1, 0, 0}};  // concatenate(a, a)
  EXPECT_FALSE(concat_in_place(same_twice));

  nlohmann::json graph_input = concat_graph(concat, {1, 64, 2}, {1, 64, 2}, {1, 128, 2});
  graph_input["attrs"]["shape"][1][1] = {1, 64, 2};
  graph_input["nodes"][3]["inputs"] = {{0, 0, 0}, {2, 0, 0}};  // concatenate(x, b): x is the caller's
  EXPECT_FALSE(concat_in_place(graph_input));
}

TEST(InPlaceConcat, TvmPlanRunsEveryConcatenate) {
  StoragePlan plan = plan_tvm(parse_graph_json(concat_graph("tvmgen_default_fused_concatenate", {1, 16, 2},
                                                            {1, 48, 2}, {1, 64, 2}).dump()), kDLCPU);
  EXPECT_TRUE(plan.node_done_in_place.empty());
}

// squeezenet1.1's eight fire-module concatenations are done in place under
// the liveness plan (its outputs stay TVM's: FixtureOutputs runs both plans);
// profiling lists them, never called.
TEST(InPlaceConcat, SqueezenetConcatenationsCostNothing) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = "squeezenet1.1";
  std::string json = read_text(fixture_path(name + "/deploy_graph.json"));
  GraphDef g = parse_graph_json(json);
  Module lib = load_module(fixture_path(name + "/deploy_lib.so"));
  std::string params = read_text(fixture_path(name + "/deploy_params.params"));
  StoragePlan plan = plan_liveness(g, kDLCPU);
  int concats = 0, in_place = 0;
  for (size_t nid = 0; nid < g.nodes.size(); ++nid) {
    if (!is_plain_concatenate(g.nodes[nid].func_name)) continue;
    ++concats;
    if (!plan.node_done_in_place[nid]) continue;
    ++in_place;
    uint32_t out = g.entry_id(static_cast<uint32_t>(nid), 0);
    size_t at = plan.entry_offset[out];
    for (const NodeEntry& in : g.nodes[nid].inputs) {
      uint32_t e = g.entry_id(in);
      EXPECT_EQ(plan.entry_buffer[e], plan.entry_buffer[out]) << g.nodes[nid].name;
      EXPECT_EQ(plan.entry_offset[e], at) << g.nodes[nid].name;
      at += entry_bytes(g, e);
    }
    EXPECT_EQ(at, plan.entry_offset[out] + entry_bytes(g, out));
  }
  EXPECT_EQ(concats, 8);
  EXPECT_EQ(in_place, 8);

  for (MemoryPlan kind : {MemoryPlan::kTvm, MemoryPlan::kLiveness}) {
    GraphExecutorOptions options;
    options.memory_plan = kind;
    options.memory_plan_from_env = false;
    auto ex = create_graph_executor(json, lib, params, {cpu()}, options);
    set_case_inputs(*ex, name);
    ProfileReport report = ex->profile(1, 0);
    int listed = 0, called = 0;
    for (const NodeProfile& node : report.nodes) {
      if (!is_plain_concatenate(node.function)) continue;
      ++listed;
      called += node.calls > 0;
      EXPECT_EQ(node.done_in_place, kind == MemoryPlan::kLiveness) << node.node;
    }
    EXPECT_EQ(listed, 8);
    EXPECT_EQ(called, kind == MemoryPlan::kLiveness ? 0 : 8);
    EXPECT_EQ(report.table().find("done in place") != std::string::npos, kind == MemoryPlan::kLiveness);
    EXPECT_EQ(ex->memory_report().liveness_concatenations_in_place, 8);  // either plan active
    EXPECT_EQ("", compare_output(ex->get_output(0), fixture_path(name + "/output_0.npy"), 0));
  }
}

// concatenate(concatenate(a, b), d): both done in place, a and b inside the
// inner output, which sits inside the outer one.
TEST(InPlaceConcat, NestedConcatenationsNest) {
  nlohmann::json g;
  g["nodes"] = {nlohmann::json{{"op", "null"}, {"name", "x"}, {"inputs", nlohmann::json::array()}},
                op_node("a", "f", {{0, 0, 0}}),
                op_node("b", "g", {{0, 0, 0}}),
                op_node("c1", "tvmgen_default_fused_concatenate", {{1, 0, 0}, {2, 0, 0}}),
                op_node("d", "h", {{0, 0, 0}}),
                op_node("c2", "tvmgen_default_fused_concatenate_1", {{3, 0, 0}, {4, 0, 0}}),
                op_node("y", "k", {{5, 0, 0}})};
  g["arg_nodes"] = {0};
  g["heads"] = {{6, 0, 0}};
  g["node_row_ptr"] = {0, 1, 2, 3, 4, 5, 6, 7};
  // Entries: 0 x [1,16], 1 a [1,16], 2 b [1,32], 3 c1 [1,48], 4 d [1,16], 5 c2 [1,64], 6 y [1,64].
  g["attrs"] = {{"dltype", {"list_str", std::vector<std::string>(7, "float32")}},
                {"shape", {"list_shape", {{1, 16}, {1, 16}, {1, 32}, {1, 48}, {1, 16}, {1, 64}, {1, 64}}}},
                {"storage_id", {"list_int", {0, 1, 2, 3, 4, 5, 6}}}};
  StoragePlan plan = liveness_of(g);
  ASSERT_FALSE(plan.node_done_in_place.empty());
  EXPECT_TRUE(plan.node_done_in_place[3]);
  EXPECT_TRUE(plan.node_done_in_place[5]);
  size_t base = plan.entry_offset[5];
  for (size_t e : {1, 2, 3, 4}) EXPECT_EQ(plan.entry_buffer[e], plan.entry_buffer[5]) << e;
  EXPECT_EQ(plan.entry_offset[3], base);           // c1 at the start of c2
  EXPECT_EQ(plan.entry_offset[1], base);           // a at the start of c1
  EXPECT_EQ(plan.entry_offset[2], base + 16 * 4);  // b after a
  EXPECT_EQ(plan.entry_offset[4], base + 48 * 4);  // d after c1
  size_t y = plan.entry_offset[6];
  EXPECT_TRUE(y + 64 * 4 <= base || base + 64 * 4 <= y) << "y overlaps c2, which it reads";
}

namespace {

int64_t elements(const DLTensor* t) { return shape_numel(t->shape, t->ndim); }
float* floats(TVMValue v) { return static_cast<float*>(static_cast<DLTensor*>(v.v_handle)->data); }

// a = x + 1
int plus_one_kernel(TVMValue* args, int*, int, TVMValue*, int*, void*) {
  for (int64_t i = 0; i < elements(static_cast<DLTensor*>(args[0].v_handle)); ++i) floats(args[1])[i] = floats(args[0])[i] + 1;
  return 0;
}
// b[i] = 2 * x[i % |x|], b three times as long as x
int tripled_double_kernel(TVMValue* args, int*, int, TVMValue*, int*, void*) {
  int64_t n = elements(static_cast<DLTensor*>(args[0].v_handle));
  for (int64_t i = 0; i < 3 * n; ++i) floats(args[1])[i] = 2 * floats(args[0])[i % n];
  return 0;
}
std::atomic<int> g_concat_calls{0};
// c = a ++ b (leading-axis concatenation of contiguous tensors)
int concat_kernel(TVMValue* args, int*, int, TVMValue*, int*, void*) {
  ++g_concat_calls;
  int64_t na = elements(static_cast<DLTensor*>(args[0].v_handle));
  int64_t nb = elements(static_cast<DLTensor*>(args[1].v_handle));
  for (int64_t i = 0; i < na; ++i) floats(args[2])[i] = floats(args[0])[i];
  for (int64_t i = 0; i < nb; ++i) floats(args[2])[na + i] = floats(args[1])[i];
  return 0;
}
// y = c - 3
int minus_three_kernel(TVMValue* args, int*, int, TVMValue*, int*, void*) {
  for (int64_t i = 0; i < elements(static_cast<DLTensor*>(args[0].v_handle)); ++i) floats(args[1])[i] = floats(args[0])[i] - 3;
  return 0;
}

}  // namespace

// The same crafted graph run end to end with kernels whose results are known:
// under the liveness plan the concatenation is never called, and y is the
// same as under TVM's plan, where it is.
TEST(InPlaceConcat, CraftedGraphGivesTheSameOutputsWithoutItsConcatenateCall) {
  ASSERT_EQ(0, TVMBackendRegisterSystemLibSymbol("ipc_plus_one", reinterpret_cast<void*>(&plus_one_kernel)));
  ASSERT_EQ(0, TVMBackendRegisterSystemLibSymbol("ipc_tripled_double", reinterpret_cast<void*>(&tripled_double_kernel)));
  ASSERT_EQ(0, TVMBackendRegisterSystemLibSymbol("ipc_fused_concatenate", reinterpret_cast<void*>(&concat_kernel)));
  ASSERT_EQ(0, TVMBackendRegisterSystemLibSymbol("ipc_minus_three", reinterpret_cast<void*>(&minus_three_kernel)));
  nlohmann::json g = concat_graph("ipc_fused_concatenate", {1, 16, 2}, {1, 48, 2}, {1, 64, 2});
  g["attrs"]["shape"][1][0] = {1, 16, 2};  // x
  g["nodes"][1]["attrs"]["func_name"] = "ipc_plus_one";
  g["nodes"][2]["attrs"]["func_name"] = "ipc_tripled_double";
  g["nodes"][4]["attrs"]["func_name"] = "ipc_minus_three";
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i) - 3;
  std::vector<float> want;
  for (float v : x) want.push_back(v + 1 - 3);
  for (int i = 0; i < 96; ++i) want.push_back(2 * x[i % 32] - 3);
  int64_t x_shape[3] = {1, 16, 2};
  DLTensor x_tensor{x.data(), DLDevice{kDLCPU, 0}, 3, DLDataType{kDLFloat, 32, 1}, x_shape, nullptr, 0};
  for (MemoryPlan kind : {MemoryPlan::kTvm, MemoryPlan::kLiveness}) {
    GraphExecutorOptions options;
    options.memory_plan = kind;
    options.memory_plan_from_env = false;
    auto ex = GraphExecutor::create(g.dump(), system_lib(), {cpu()}, options);
    ex->set_input("x", &x_tensor);
    g_concat_calls = 0;
    ex->run();
    EXPECT_EQ(g_concat_calls.load(), kind == MemoryPlan::kLiveness ? 0 : 1);
    NDArray y = ex->get_output(0);
    ASSERT_EQ(y.nbytes(), want.size() * sizeof(float));
    std::vector<float> got(static_cast<const float*>(y->data), static_cast<const float*>(y->data) + want.size());
    EXPECT_EQ(got, want) << (kind == MemoryPlan::kLiveness ? "liveness plan" : "TVM's plan");
  }
}
