// Every CPU fixture, from the one-file and the three-file form, with TVM's
// storage plan and the liveness re-plan, matches TVM's recorded outputs.
#include "fixture_cases.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

struct RunCase {
  std::string name;
  bool one_file;
  MemoryPlan plan;
};

std::shared_ptr<GraphExecutor> make_executor(const RunCase& c) {
  GraphExecutorOptions options;
  options.memory_plan = c.plan;
  options.memory_plan_from_env = false;
  if (c.one_file) {
    Module root = load_module(fixture_path(c.name + "/deploy_factory.so"));
    const char* plan = c.plan == MemoryPlan::kLiveness ? "liveness" : "tvm";
    Module m = call_function(root->get_function("create_with_options"),
                             ArgList().add_string(plan).add_int(0).add_device(cpu()))
                   .as_module();
    return graph_executor_of(m);
  }
  Module lib = load_module(fixture_path(c.name + "/deploy_lib.so"));
  return create_graph_executor(read_text(fixture_path(c.name + "/deploy_graph.json")), lib,
                               read_text(fixture_path(c.name + "/deploy_params.params")), {cpu()}, options);
}

std::vector<RunCase> run_cases() {
  std::vector<RunCase> out;
  for (const std::string& name : cpu_cases())
    for (bool one_file : {true, false})
      for (MemoryPlan plan : {MemoryPlan::kTvm, MemoryPlan::kLiveness}) out.push_back(RunCase{name, one_file, plan});
  return out;
}

void expect_case_outputs(GraphExecutor& ex, const std::string& name) {
  double tol = case_json(name).value("tolerance", 0.0);
  for (int i = 0; i < ex.num_outputs(); ++i) {
    EXPECT_EQ("", compare_output(ex.get_output(i), fixture_path(name + "/output_" + std::to_string(i) + ".npy"), tol))
        << name << " output " << i;
  }
}

}  // namespace

class FixtureOutputs : public ::testing::TestWithParam<RunCase> {};

TEST_P(FixtureOutputs, MatchTvm) {
  GRAPHRT_REQUIRE_FIXTURES();
  const RunCase& c = GetParam();
  auto ex = make_executor(c);
  set_case_inputs(*ex, c.name);
  ex->run();
  expect_case_outputs(*ex, c.name);
  // A second run of the same executor gives the same outputs.
  ex->run();
  expect_case_outputs(*ex, c.name);
}

INSTANTIATE_TEST_SUITE_P(Cpu, FixtureOutputs, ::testing::ValuesIn(run_cases()), [](const auto& info) {
  std::string n = info.param.name + (info.param.one_file ? "_factory" : "_threefile") +
                  (info.param.plan == MemoryPlan::kLiveness ? "_liveness" : "_tvmplan");
  for (char& ch : n) if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  return n;
});

TEST(FixtureMemory, LivenessPlanIsReportedNextToTvmPlan) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const std::string& name : cpu_cases()) {
    auto ex = make_executor(RunCase{name, false, MemoryPlan::kLiveness});
    MemoryReport r = ex->memory_report();
    std::printf("%-20s tvm plan %10zu bytes, liveness plan %10zu bytes\n", name.c_str(), r.tvm_plan_bytes,
                r.liveness_plan_bytes);
    EXPECT_GT(r.tvm_plan_bytes, 0u);
    EXPECT_EQ(r.allocated_bytes, (r.liveness_plan_bytes + 3) / 4 * 4);
  }
}
