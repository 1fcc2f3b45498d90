// The session layer through libgraphrt's public API: every graph form and a
// Relax executable load through one Session, their metadata comes from the
// executor or executable, and runners give TVM's outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "graphrt/session.h"
#include "test_support.h"

namespace {

using graphrt::Session;

graphrt::NDArray array_of(const graphrt_apps::NpyArray& a) {
  graphrt::NDArray out = graphrt::NDArray::empty(a.shape, a.dtype, graphrt::cpu());
  out.copy_from_bytes(a.data.data(), a.data.size());
  return out;
}

void expect_equal(const graphrt::NDArray& got, const graphrt_apps::NpyArray& want) {
  ASSERT_EQ(got.nbytes(), want.data.size());
  EXPECT_EQ(0, std::memcmp(got->data, want.data.data(), want.data.size()));
}

graphrt::ModelSource source(const std::string& path, const std::string& graph = "", const std::string& params = "") {
  return graphrt::ModelSource{graphrt_test::fixture_path(path), graph.empty() ? "" : graphrt_test::fixture_path(graph),
                              params.empty() ? "" : graphrt_test::fixture_path(params)};
}

TEST(Session, GraphModelsOneAndThreeFileGiveTheSameMetadataAndOutputs) {
  GRAPHRT_REQUIRE_FIXTURES();
  Session session(graphrt::runtime(), graphrt::cpu());
  const graphrt_apps::NpyArray input = graphrt_test::read_npy(graphrt_test::fixture_path("mlp/input_data.npy"));
  const graphrt_apps::NpyArray want = graphrt_test::read_npy(graphrt_test::fixture_path("mlp/output_0.npy"));
  for (const graphrt::ModelSource& src :
       {source("mlp/deploy_factory.so"), source("mlp/deploy_lib.so", "mlp/deploy_graph.json", "mlp/deploy_params.params")}) {
    std::shared_ptr<graphrt::Model> model = session.load(src);
    EXPECT_EQ(graphrt::ModelKind::kGraph, model->kind());
    const graphrt::FunctionSpec& f = model->function();
    EXPECT_EQ("default", f.name);
    ASSERT_EQ(1u, f.inputs.size());  // params are not inputs
    EXPECT_EQ("data", f.inputs[0].name);
    EXPECT_EQ(input.shape, f.inputs[0].shape);
    std::vector<std::string> params = model->params();
    std::sort(params.begin(), params.end());
    EXPECT_EQ((std::vector<std::string>{"p0", "p1", "p2", "p3", "p4", "p5"}), params);
    ASSERT_EQ(1u, f.outputs.size());
    EXPECT_EQ(want.shape, f.outputs[0].shape);
    for (int i = 0; i < 2; ++i) {  // the executor made at load, then a new one sharing the params
      std::unique_ptr<graphrt::Runner> runner = model->runner();
      graphrt::NDArray x = array_of(input);
      if (i == 0)
        runner->set_input("data", x.handle());
      else
        runner->set_input_zero_copy("data", x.handle());
      runner->run();
      ASSERT_EQ(1, runner->num_outputs());
      expect_equal(runner->output(0), want);
    }
  }
}

TEST(Session, RelaxExecutableListsItsFunctionsAndRuns) {
  GRAPHRT_REQUIRE_FIXTURES();
  Session session(graphrt::runtime(), graphrt::cpu());
  std::shared_ptr<graphrt::Model> model = session.load(source("relax/relax_mlp/deploy_relax.so"));
  EXPECT_EQ(graphrt::ModelKind::kRelax, model->kind());
  const graphrt::FunctionSpec& main = model->function();
  EXPECT_EQ("main", main.name);
  ASSERT_FALSE(main.inputs.empty());
  EXPECT_EQ("x", main.inputs[0].name);
  std::unique_ptr<graphrt::Runner> runner = model->runner();
  EXPECT_THROW(runner->run(), graphrt::Error);  // x not set
  const graphrt_apps::NpyArray x = graphrt_test::read_npy(graphrt_test::fixture_path("relax/relax_mlp/input_x.npy"));
  graphrt::NDArray xa = array_of(x);
  runner->set_input("x", xa.handle());
  runner->run();
  ASSERT_GE(runner->num_outputs(), 1);
  expect_equal(runner->output(0), graphrt_test::read_npy(graphrt_test::fixture_path("relax/relax_mlp/output_0.npy")));
}

TEST(Session, MistakesAreNamed) {
  GRAPHRT_REQUIRE_FIXTURES();
  Session session(graphrt::runtime(), graphrt::cpu());
  try {
    session.load(source("mlp/deploy_params.params"));
    FAIL() << "a params file loaded as a model";
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("is a params file")) << e.what();
  }
  try {
    session.load(source("mlp/deploy_lib.so"));
    FAIL() << "a kernels library without its graph loaded";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ("graph", e.context_value("option")) << e.what();
  }
  std::shared_ptr<graphrt::Model> model = session.load(source("mlp/deploy_factory.so"));
  EXPECT_THROW(model->function("main"), graphrt::Error);
}

}  // namespace
