// Executor API: inputs by name/index, errors, zero-copy, shared params across
// threads, profiling.
#include <thread>

#include "fixture_cases.h"

using namespace graphrt;
using namespace graphrt_test;

TEST(ExecutorApi, InputOutputQueries) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("multi_io");
  EXPECT_EQ(ex->num_inputs(), 2);
  EXPECT_EQ(ex->num_outputs(), 3);
  EXPECT_EQ(ex->input_index("b"), 1);
  EXPECT_EQ(ex->input_index("zzz"), -1);
  EXPECT_EQ(ex->output_index("tvmgen_default_fused_sum:0"), 1);
  std::vector<TensorInfo> info = ex->input_info();
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info[1].name, "b");
  EXPECT_EQ(dtype_to_string(info[1].dtype), "int32");
  auto mlp = three_file_executor("mlp");
  ASSERT_EQ(mlp->input_info().size(), 1u) << "params are not user inputs";
  EXPECT_EQ(mlp->input_info()[0].name, "data");
}

TEST(ExecutorApi, BadInputsGiveClearErrors) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("multi_io");
  NDArray a = NDArray::empty({2, 3}, DLDataType{kDLFloat, 32, 1}, cpu());
  std::string unknown = error_of([&] { ex->set_input("c", a.handle()); });
  EXPECT_NE(unknown.find("unknown input 'c'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("data inputs: a, b)"), std::string::npos) << unknown;

  NDArray wrong_shape = NDArray::empty({3, 2}, DLDataType{kDLFloat, 32, 1}, cpu());
  std::string shape = error_of([&] { ex->set_input("a", wrong_shape.handle()); });
  EXPECT_NE(shape.find("expects (2, 3) float32, got (3, 2) float32"), std::string::npos) << shape;

  std::string dtype = error_of([&] { ex->set_input("b", a.handle()); });
  EXPECT_NE(dtype.find("expects (2, 3) int32, got (2, 3) float32"), std::string::npos) << dtype;
  EXPECT_NE(error_of([&] { ex->set_input(7, a.handle()); }).find("out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { ex->get_output(3); }).find("out of range"), std::string::npos);
}

TEST(ExecutorApi, MissingNodeFunctionNamesNodeAndFunction) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = load_module(fixture_path("mlp/deploy_lib.so"));
  // One function of the graph missing (a typo): the node, the name and its look-alike.
  std::string graph = read_text(fixture_path("mlp/deploy_graph.json"));
  const std::string attr = "\"func_name\": \"tvmgen_default_fused_nn_softmax\"";
  const size_t at = graph.find(attr);
  ASSERT_NE(at, std::string::npos);
  graph.replace(at, attr.size(), "\"func_name\": \"tvmgen_default_fused_nn_softmx\"");
  std::string msg = error_of([&] { GraphExecutor::create(graph, lib, {cpu()}); });
  EXPECT_NE(msg.find("calls function 'tvmgen_default_fused_nn_softmx', which the library does not have (did you "
                     "mean: tvmgen_default_fused_nn_softmax"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("graph node "), std::string::npos) << msg;
}

TEST(ExecutorApi, GraphOfAnotherExportSaysSo) {
  GRAPHRT_REQUIRE_FIXTURES();
  // Most of the graph's functions missing: the graph and the library do not belong together.
  Module other_lib = load_module(fixture_path("multi_io/deploy_lib.so"));
  std::string graph = read_text(fixture_path("mlp/deploy_graph.json"));
  std::string msg = error_of([&] { GraphExecutor::create(graph, other_lib, {cpu()}); });
  EXPECT_NE(msg.find("the graph and the library come from different exports: the library has 0 of the 4 functions "
                     "the graph calls (missing: tvmgen_default_fused_nn_contrib_dense_pack_add_nn_relu, "),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("did you mean"), std::string::npos) << msg;
}

TEST(ExecutorApi, ParamsThatDoNotMatchAreNamed) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("mlp");
  ParamList bad = {{"p1", NDArray::empty({1, 7}, DLDataType{kDLFloat, 32, 1}, cpu())}};
  std::string msg = error_of([&] { ex->load_params(save_param_dict(bad)); });
  EXPECT_NE(msg.find("param 'p1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(1, 128)"), std::string::npos) << msg;
}

TEST(ExecutorApi, ZeroCopyInputAndOutput) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("multi_io");
  NDArray a = npy_to_ndarray(read_npy(fixture_path("multi_io/input_a.npy")));
  NDArray b = npy_to_ndarray(read_npy(fixture_path("multi_io/input_b.npy")));
  ex->set_input_zero_copy(0, a.handle());
  ex->set_input_zero_copy(1, b.handle());
  std::vector<NDArray> outs;
  for (int i = 0; i < 3; ++i) {
    TensorInfo info = ex->output_info()[i];
    outs.push_back(NDArray::empty(info.shape, info.dtype, cpu()));
    ex->set_output_zero_copy(i, outs.back().handle());
  }
  ex->run();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ("", compare_output(outs[i], fixture_path("multi_io/output_" + std::to_string(i) + ".npy"), 0)) << i;
  }
  // Output 0 comes from a __nop reshape: the producer wrote straight into our buffer.
  EXPECT_EQ(ex->get_output(0)->data, outs[0]->data);
  NDArray misaligned = NDArray::empty({2, 3}, DLDataType{kDLFloat, 32, 1}, cpu());
  DLTensor shifted = *misaligned.handle();
  shifted.byte_offset = 4;
  EXPECT_NE(error_of([&] { ex->set_input_zero_copy(0, &shifted); }).find("64-byte aligned"), std::string::npos);
}

TEST(ExecutorApi, SharedParamsInTwoThreads) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib;
  auto first = three_file_executor("squeezenet1.1", &lib);
  std::string params = read_text(fixture_path("squeezenet1.1/deploy_params.params"));
  auto second = GraphExecutor::create(read_text(fixture_path("squeezenet1.1/deploy_graph.json")), lib, {cpu()});
  second->share_params(*first, params);
  EXPECT_EQ(second->get_input(second->input_index("p0"))->data, first->get_input(first->input_index("p0"))->data);
  std::string failures[2];
  auto worker = [&](GraphExecutor* ex, std::string* failure) {
    set_case_inputs(*ex, "squeezenet1.1");
    for (int i = 0; i < 3; ++i) {
      ex->run();
      std::string diff = compare_output(ex->get_output(0), fixture_path("squeezenet1.1/output_0.npy"), 0);
      if (!diff.empty()) *failure = diff;
    }
  };
  std::thread t1(worker, first.get(), &failures[0]);
  std::thread t2(worker, second.get(), &failures[1]);
  t1.join();
  t2.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

TEST(ExecutorApi, ProfilerReportsEveryNode) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = three_file_executor("mlp");
  set_case_inputs(*ex, "mlp");
  ProfileReport report = ex->profile(3);
  ASSERT_EQ(report.nodes.size(), 4u);  // 4 kernels; the __nop is not a call
  for (const NodeProfile& n : report.nodes) EXPECT_EQ(n.calls, 3);
  std::string table = report.table();
  EXPECT_NE(table.find("tvmgen_default_fused_nn_softmax"), std::string::npos);
  EXPECT_NE(table.find("Per function"), std::string::npos);
  auto trace = nlohmann::json::parse(report.chrome_trace());
  ASSERT_EQ(trace["traceEvents"].size(), 12u);
  EXPECT_EQ(trace["traceEvents"][0]["ph"], "X");
  EXPECT_EQ("", compare_output(ex->get_output(0), fixture_path("mlp/output_0.npy"), 0));
}

TEST(ExecutorApi, PackedInterfaceLikeTvm) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module root = load_module(fixture_path("multi_io/deploy_factory.so"));
  Module gmod = call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module();
  EXPECT_EQ(gmod->type_key(), "GraphExecutor");
  NDArray a = npy_to_ndarray(read_npy(fixture_path("multi_io/input_a.npy")));
  NDArray b = npy_to_ndarray(read_npy(fixture_path("multi_io/input_b.npy")));
  call_function(gmod->get_function("set_input"), ArgList().add_string("a").add_ndarray(a));
  call_function(gmod->get_function("set_input"), ArgList().add_int(1).add_ndarray(b));
  call_function(gmod->get_function("run"), ArgList());
  EXPECT_EQ(call_function(gmod->get_function("get_num_outputs"), ArgList()).as_int(), 3);
  NDArray out = call_function(gmod->get_function("get_output"), ArgList().add_int(2)).as_ndarray();
  EXPECT_EQ("", compare_output(out, fixture_path("multi_io/output_2.npy"), 0));
  EXPECT_FALSE(gmod->get_function("no_such_method"));
}
