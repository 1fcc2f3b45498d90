// Every shared Relax case, every input set: graphrt's outputs equal TVM's
// bit for bit, through TVM's module interface (vm_load_executable,
// vm_initialization, the entry function by name).
#include <gtest/gtest.h>

#include <thread>

#include "fixture_cases.h"
#include "graphrt/runtime.h"
#include "backends/relax/vm_module.h"
#include "relax_cases.h"

namespace {

using graphrt_test::relax_case;

class RelaxFixture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (graphrt_test::fixtures_dir().empty() || graphrt_test::relax_cases().empty()) {
      if (graphrt_test::fixtures_required()) FAIL() << "Relax fixtures missing and required";
      GTEST_SKIP() << "Relax fixtures not found";
    }
  }
};

graphrt::RetValue run_entry(const graphrt::Module& vm, const std::string& entry, const std::vector<graphrt::NDArray>& inputs) {
  graphrt::ArgList args;
  for (const auto& a : inputs) args.add_ndarray(a);
  return graphrt::call_function(vm->require_function(entry), args);
}

void expect_outputs(const graphrt::RetValue& result, const graphrt_test::RelaxInputSet& set) {
  const std::vector<graphrt::NDArray> got = graphrt_test::flatten_result(result);
  ASSERT_EQ(got.size(), set.outputs.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(graphrt_test::compare_output(got[i], set.outputs[i], 0), "") << set.outputs[i];
}

TEST_P(RelaxFixture, MatchesTvmBitExactForEveryInputSet) {
  const auto rc = relax_case(GetParam());
  graphrt::Module lib = graphrt::load_module(rc.dir + "/deploy_relax.so");
  graphrt::Module vm = graphrt_test::relax_vm(lib);
  for (const auto& set : rc.sets) {
    SCOPED_TRACE("input set '" + set.suffix + "'");
    expect_outputs(run_entry(vm, rc.entry, graphrt_test::relax_inputs(set)), set);
  }
}

TEST_P(RelaxFixture, ElfLoaderGivesTheSameOutputs) {
  const auto rc = relax_case(GetParam());
  graphrt::LoadOptions options;
  options.loader = "elf";
  graphrt::Module vm = graphrt_test::relax_vm(graphrt::load_module(rc.dir + "/deploy_relax.so", options));
  for (const auto& set : rc.sets) expect_outputs(run_entry(vm, rc.entry, graphrt_test::relax_inputs(set)), set);
}

TEST_P(RelaxFixture, StatefulInterfaceGivesTheSameOutputs) {
  const auto rc = relax_case(GetParam());
  graphrt::Module vm = graphrt_test::relax_vm(graphrt::load_module(rc.dir + "/deploy_relax.so"));
  const auto& set = rc.sets.front();
  graphrt::ArgList in;
  in.add_string(rc.entry);
  const auto inputs = graphrt_test::relax_inputs(set);
  for (const auto& a : inputs) in.add_ndarray(a);
  graphrt::call_function(vm->require_function("set_input"), in);
  graphrt::ArgList name;
  name.add_string(rc.entry);
  graphrt::call_function(vm->require_function("invoke_stateful"), name);
  const int64_t arity = graphrt::call_function(vm->require_function("get_output_arity"), name).as_int();
  if (arity < 0) {
    EXPECT_EQ(set.outputs.size(), 1u);
    EXPECT_EQ(graphrt_test::compare_output(graphrt::call_function(vm->require_function("get_output"), name).as_ndarray(),
                                           set.outputs[0], 0), "");
  } else {
    expect_outputs(graphrt::call_function(vm->require_function("get_output"), name), set);
  }
  EXPECT_EQ(graphrt::call_function(vm->require_function("get_function_arity"), name).as_int(),
            static_cast<int64_t>(set.inputs.size()));
}

TEST_P(RelaxFixture, SecondCallAllocatesNoStorage) {
  const auto rc = relax_case(GetParam());
  graphrt::Module vm = graphrt_test::relax_vm(graphrt::load_module(rc.dir + "/deploy_relax.so"));
  auto* node = dynamic_cast<graphrt::relax::VmModuleNode*>(vm.get());
  ASSERT_NE(node, nullptr);
  const auto inputs = graphrt_test::relax_inputs(rc.sets.front());
  run_entry(vm, rc.entry, inputs);  // result dropped: its storage goes back to the pool
  const uint64_t after_first = node->vm().pool().system_allocations();
  EXPECT_GT(after_first, 0u);
  graphrt::RetValue second = run_entry(vm, rc.entry, inputs);
  EXPECT_EQ(node->vm().pool().system_allocations(), after_first);
  expect_outputs(second, rc.sets.front());
}

// Storages and views are handed out again only when nobody outside the VM
// holds them: results kept across calls stay intact, and warm calls whose
// results are dropped take no new block.
TEST_P(RelaxFixture, KeptResultsSurviveLaterCalls) {
  const auto rc = relax_case(GetParam());
  graphrt::Module vm = graphrt_test::relax_vm(graphrt::load_module(rc.dir + "/deploy_relax.so"));
  std::vector<std::vector<graphrt::NDArray>> kept;
  for (int round = 0; round < 3; ++round)
    for (const auto& set : rc.sets) kept.push_back(graphrt_test::flatten_result(run_entry(vm, rc.entry, graphrt_test::relax_inputs(set))));
  for (size_t k = 0; k < kept.size(); ++k) {
    const auto& set = rc.sets[k % rc.sets.size()];
    ASSERT_EQ(kept[k].size(), set.outputs.size());
    for (size_t i = 0; i < kept[k].size(); ++i)
      EXPECT_EQ(graphrt_test::compare_output(kept[k][i], set.outputs[i], 0), "") << "call " << k << " output " << i;
  }
  for (size_t k = 1; k < kept.size(); ++k) EXPECT_NE(kept[k][0]->data, kept[k - 1][0]->data);
  kept.clear();
  auto* node = dynamic_cast<graphrt::relax::VmModuleNode*>(vm.get());
  ASSERT_NE(node, nullptr);
  const auto inputs = graphrt_test::relax_inputs(rc.sets.front());
  run_entry(vm, rc.entry, inputs);
  const uint64_t blocks = node->vm().pool().system_allocations();
  for (int i = 0; i < 3; ++i) expect_outputs(run_entry(vm, rc.entry, inputs), rc.sets.front());
  EXPECT_EQ(node->vm().pool().system_allocations(), blocks);
}

INSTANTIATE_TEST_SUITE_P(Cases, RelaxFixture, ::testing::ValuesIn([] {
                           std::vector<std::string> c = graphrt_test::relax_cases();
                           return c.empty() ? std::vector<std::string>{"none"} : c;
                         }()));

}  // namespace

namespace {

// Two VMs of one executable, each called from its own thread (TVM's model of
// concurrency: one VM per thread), both give TVM's outputs every time.
TEST(RelaxConcurrency, TwoVmsOfOneExecutableOnTwoThreads) {
  GRAPHRT_REQUIRE_FIXTURES();
  if (graphrt_test::relax_cases().empty()) GTEST_SKIP() << "Relax fixtures not found";
  const auto rc = relax_case("relax_transformer_block");
  graphrt::Module lib = graphrt::load_module(rc.dir + "/deploy_relax.so");
  const auto inputs = graphrt_test::relax_inputs(rc.sets.front());
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      try {
        graphrt::Module vm = graphrt_test::relax_vm(lib);
        for (int i = 0; i < 50 && failures[t].empty(); ++i) {
          const auto got = graphrt_test::flatten_result(run_entry(vm, rc.entry, inputs));
          failures[t] = graphrt_test::compare_output(got.at(0), rc.sets.front().outputs.at(0), 0);
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

}  // namespace
