// Executors made by one factory share its param arrays (one copy of the
// params), a write to a param gives only the writer its own copy, and
// executors run from several threads at once give TVM's outputs.
#include <cstring>
#include <thread>

#include "fixture_cases.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

std::shared_ptr<GraphExecutor> from_factory(const Module& root, const char* plan) {
  Module m = call_function(root->get_function("create_with_options"),
                           ArgList().add_string(plan).add_int(0).add_device(cpu()))
                 .as_module();
  return graph_executor_of(m);
}

std::string outputs_differ(GraphExecutor& ex, const std::string& name) {
  std::string diff;
  for (int i = 0; i < ex.num_outputs(); ++i)
    diff += compare_output(ex.get_output(i), fixture_path(name + "/output_" + std::to_string(i) + ".npy"), 0);
  return diff;
}

}  // namespace

TEST(BoundParams, ExecutorsOfOneFactoryShareParamsUntilOneWritesThem) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const char* plan : {"tvm", "liveness"}) {
    Module root = load_module(fixture_path("mlp/deploy_factory.so"));
    auto a = from_factory(root, plan);
    auto b = from_factory(root, plan);
    // The largest param: a weight (this model's biases are all zero).
    int index = -1;
    for (const std::string& name : a->param_names()) {
      int i = a->input_index(name);
      if (index < 0 || a->get_input(i).nbytes() > a->get_input(index).nbytes()) index = i;
    }
    ASSERT_GE(index, 0);
    EXPECT_EQ(a->get_input(index)->data, b->get_input(index)->data) << plan << ": params were copied";

    NDArray zeros = NDArray::empty(a->get_input(index).shape(), a->get_input(index).dtype(), cpu());
    std::memset(zeros->data, 0, zeros.nbytes());
    a->set_input(index, zeros.handle());
    EXPECT_NE(a->get_input(index)->data, b->get_input(index)->data) << plan;

    set_case_inputs(*a, "mlp");
    set_case_inputs(*b, "mlp");
    a->run();
    b->run();
    EXPECT_EQ("", outputs_differ(*b, "mlp")) << plan << ": the other executor saw the write";
    EXPECT_NE("", outputs_differ(*a, "mlp")) << plan << ": the write did not reach the writer";
  }
}

TEST(BoundParams, ConcurrentExecutorsGiveTvmOutputs) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const std::string name : {"mlp", "squeezenet1.1"}) {
    Module root = load_module(fixture_path(name + "/deploy_factory.so"));
    std::vector<std::shared_ptr<GraphExecutor>> executors;
    for (int i = 0; i < 3; ++i) {
      executors.push_back(from_factory(root, i % 2 ? "liveness" : "tvm"));
      set_case_inputs(*executors.back(), name);
    }
    const int runs = name == "mlp" ? 50 : 3;
    std::vector<std::string> failures(executors.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < executors.size(); ++i) {
      threads.emplace_back([&, i] {
        for (int r = 0; r < runs && failures[i].empty(); ++r) {
          executors[i]->run();
          failures[i] = outputs_differ(*executors[i], name);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < executors.size(); ++i) EXPECT_EQ("", failures[i]) << name << " executor " << i;
  }
}
