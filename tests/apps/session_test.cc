// The session layer through libgraphrt's public API: every graph form and a
// Relax executable load through one Session, their metadata comes from the
// executor or executable, and runners give TVM's outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "fixture_cases.h"
#include "graphrt/graph_json.h"
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
                              params.empty() ? "" : graphrt_test::fixture_path(params), ""};
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
    // The executor made at load, then new ones sharing the params; the third binds the input as
    // a caller that checked it does (by the function's index; the executor numbers its params
    // among its inputs too), from bytes at an odd address, as a request's may be.
    for (int i = 0; i < 3; ++i) {
      std::unique_ptr<graphrt::Runner> runner = model->runner();
      graphrt::NDArray x = array_of(input);
      std::string unaligned(x.nbytes() + 1, '\0');
      if (i == 0) {
        runner->set_input("data", x.handle());
      } else if (i == 1) {
        runner->set_input_zero_copy("data", x.handle());
      } else {
        x.copy_to_bytes(&unaligned[1], x.nbytes());
        DLTensor t = *x.handle();
        t.data = &unaligned[1];
        // The one check kept: fewer bytes than the input takes would be read past.
        DLTensor short_of_one_row = t;
        std::vector<int64_t> fewer(t.shape, t.shape + t.ndim);
        fewer.back() -= 1;
        short_of_one_row.shape = fewer.data();
        try {
          runner->set_checked_input(0, &short_of_one_row);
          ADD_FAILURE() << "a tensor smaller than the input was bound";
        } catch (const graphrt::Error& e) {
          EXPECT_EQ("data", e.context_value("input")) << e.what();
        }
        runner->set_checked_input(0, &t);
      }
      runner->run();
      ASSERT_EQ(1, runner->num_outputs());
      expect_equal(runner->output(0), want);
    }
  }
}

// A factory parses its graph JSON once: the runners of one model share the parsed graph (a
// server's instances hold one copy of the graph's structure), each with its own executor: a run
// of one leaves the other's outputs as they were.
TEST(Session, RunnersOfOneGraphModelShareTheParsedGraphNotAnExecutor) {
  GRAPHRT_REQUIRE_FIXTURES();
  Session session(graphrt::runtime(), graphrt::cpu());
  std::shared_ptr<graphrt::Model> model = session.load(source("chain1000/deploy_factory.so"));
  std::unique_ptr<graphrt::Runner> first = model->runner();
  std::unique_ptr<graphrt::Runner> second = model->runner();
  const graphrt::RunnerSharing shared = first->sharing_with(*second);
  EXPECT_TRUE(shared.graph);
  EXPECT_FALSE(shared.executor);
  EXPECT_TRUE(first->sharing_with(*first).executor);
  // The same file loaded again is the same image, one module tree in the process: its factory
  // is this one, and so is its parsed graph. Another model's runner shares nothing.
  std::unique_ptr<graphrt::Runner> again = session.load(source("chain1000/deploy_factory.so"))->runner();
  EXPECT_TRUE(first->sharing_with(*again).graph);
  EXPECT_FALSE(first->sharing_with(*again).executor);
  std::unique_ptr<graphrt::Runner> other = session.load(source("mlp/deploy_factory.so"))->runner();
  EXPECT_FALSE(first->sharing_with(*other).graph);
  EXPECT_FALSE(first->sharing_with(*other).executor);

  const graphrt_apps::NpyArray x = graphrt_test::read_npy(graphrt_test::fixture_path("chain1000/input_x.npy"));
  const graphrt_apps::NpyArray want = graphrt_test::read_npy(graphrt_test::fixture_path("chain1000/output_0.npy"));
  const std::string& name = model->function().inputs.at(0).name;
  graphrt::NDArray input = array_of(x);
  first->set_input(name, input.handle());
  first->run();
  expect_equal(first->output(0), want);
  graphrt::NDArray zeros = array_of(x);
  std::memset(zeros->data, 0, zeros.nbytes());
  second->set_input(name, zeros.handle());
  second->run();
  expect_equal(first->output(0), want);
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
  const graphrt_apps::NpyArray want = graphrt_test::read_npy(graphrt_test::fixture_path("relax/relax_mlp/output_0.npy"));
  expect_equal(runner->output(0), want);
  std::unique_ptr<graphrt::Runner> checked = model->runner();
  checked->set_checked_input(0, xa.handle());  // bound as a caller that checked x does
  checked->run();
  expect_equal(checked->output(0), want);
}

// The shape case.json gives input `name`, with -1 where another input set of
// the case (input_<name>_<set>.npy) has another size: the dimensions TVM
// left symbolic in these exports.
std::vector<int64_t> expected_shape(const std::string& dir, const nlohmann::json& input, const std::string& name) {
  std::vector<int64_t> shape = input["shape"].get<std::vector<int64_t>>();
  for (const char* set : {"_n1", "_else"}) {
    const std::string path = graphrt_test::fixture_path(dir + "/input_" + name + set + ".npy");
    if (!std::ifstream(path)) continue;
    const graphrt_apps::NpyArray other = graphrt_test::read_npy(path);
    for (size_t d = 0; d < shape.size() && d < other.shape.size(); ++d)
      if (other.shape[d] != shape[d]) shape[d] = -1;
  }
  return shape;
}

// Relax inputs carry what the executable's code checks: case.json's names,
// dtypes and shapes (from TVM's export script), symbolic where the case runs
// more than one size; for both ABIs.
TEST(Session, RelaxInputsHaveTheDtypesAndShapesTheCodeChecks) {
  GRAPHRT_REQUIRE_FIXTURES();
  Session session(graphrt::runtime(), graphrt::cpu());
  int checked = 0;
  for (const char* abi : {"relax/", "relax-ffi/"}) {
    for (const char* name : {"relax_mlp", "relax_cnn", "relax_chain", "relax_control_flow", "relax_dynamic_batch",
                             "relax_tuple_io", "relax_transformer_block", "relax_params_as_args"}) {
      const std::string dir = std::string(abi) + name;
      SCOPED_TRACE(dir);
      const nlohmann::json c = graphrt_test::case_json(dir);
      std::shared_ptr<graphrt::Model> model = session.load(source(dir + "/deploy_relax.so"));
      const graphrt::FunctionSpec& f = model->function(c["entry"].get<std::string>());
      ASSERT_EQ(c["inputs"].size(), f.inputs.size());
      for (const graphrt::TensorSpec& t : f.inputs) {
        ASSERT_TRUE(c["inputs"].contains(t.name)) << t.name;
        const nlohmann::json& want = c["inputs"][t.name];
        if (!t.known) {  // only weights passed as arguments go unchecked (nn.Module exports)
          EXPECT_EQ("relax_params_as_args", std::string(name)) << t.name;
          EXPECT_NE("x", t.name);
          continue;
        }
        EXPECT_EQ(want["dtype"].get<std::string>(), graphrt::dtype_to_string(t.dtype)) << t.name;
        EXPECT_EQ(expected_shape(dir, want, t.name), t.shape) << t.name;
        ASSERT_EQ(t.shape.size(), t.symbols.size());
        for (size_t d = 0; d < t.shape.size(); ++d) EXPECT_EQ(t.shape[d] < 0, t.symbols[d] >= 0) << t.name << " " << d;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 18);  // every case's x (and tuple_io's y), in both ABIs
}

// A one-file export's factory, typed: its graph JSON is the three-file form's
// graph, its params the params file's names; another module is refused by kind.
TEST(GraphFactoryInfo, GraphAndParamNamesOfTheFactory) {
  GRAPHRT_REQUIRE_FIXTURES();
  const graphrt::GraphFactoryInfo info =
      graphrt::graph_factory_info(graphrt::load_module(graphrt_test::fixture_path("mlp/deploy_factory.so")));
  EXPECT_EQ(graphrt::parse_graph_json(graphrt_test::read_text(graphrt_test::fixture_path("mlp/deploy_graph.json")))
                .nodes.size(),
            graphrt::parse_graph_json(info.graph_json).nodes.size());
  std::vector<std::string> want;
  for (const auto& p : graphrt::load_param_dict(
           graphrt_test::read_text(graphrt_test::fixture_path("mlp/deploy_params.params"))))
    want.push_back(p.first);
  std::vector<std::string> got = info.param_names;
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(want, got);
  try {
    graphrt::graph_factory_info(graphrt::load_module(graphrt_test::fixture_path("mlp/deploy_lib.so")));
    FAIL() << "a kernels library read as a factory";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kTypeMismatch, e.kind()) << e.what();
  }
}

// A Session's loads reach its own runtime's library loaders, not the default's.
TEST(Session, LoadsThroughItsOwnRuntime) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt::Runtime own;
  own.register_library_loader("only-here", [](const graphrt::LibrarySource& source) -> std::shared_ptr<graphrt::Library> {
    throw graphrt::Error(graphrt::ErrorKind::kUnsupported, "the session's own loader was asked").with("file", source.path);
  });
  graphrt::SessionOptions options;
  options.load.loader = "only-here";
  try {
    Session(own, graphrt::cpu(), options).load(source("mlp/deploy_factory.so"));
    FAIL() << "loaded past a loader that refuses everything";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kUnsupported, e.kind()) << e.what();
    EXPECT_NE(std::string::npos, std::string(e.what()).find("own loader was asked")) << e.what();
  }
  try {
    Session(graphrt::runtime(), graphrt::cpu(), options).load(source("mlp/deploy_factory.so"));
    FAIL() << "the default runtime has a loader it was never given";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kNotFound, e.kind()) << e.what();
  }
  // An empty runtime knows no params file: it is not named as one there.
  graphrt::Runtime empty;
  try {
    Session(empty, graphrt::cpu()).load(source("mlp/deploy_params.params"));
    FAIL() << "a params file loaded as a model";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(std::string::npos, std::string(e.what()).find("is a params file")) << e.what();
  }
  // Nor the blob's records: they are read by the session's runtime's loaders, not the default's.
  try {
    Session(empty, graphrt::cpu()).load(source("mlp/deploy_factory.so"));
    FAIL() << "a factory record read without a loader in the session's runtime";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kNotFound, e.kind()) << e.what();
    EXPECT_EQ("GraphExecutorFactory", e.context_value("tkey")) << e.what();
  }
}

// A library loaded and alive is one module tree in the process (its context variable points
// into it), whose modules belong to the runtime that loaded it: loads through that runtime
// share it, a load through another is refused rather than handed another runtime's modules.
TEST(Session, ALoadedImageIsSharedOnlyThroughItsRuntime) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt::Module held = graphrt::load_module(graphrt_test::fixture_path("mlp/deploy_factory.so"));
  EXPECT_EQ(held.get(), Session(graphrt::runtime(), graphrt::cpu()).load(source("mlp/deploy_factory.so"))->root().get());
  graphrt::Runtime other;
  try {
    Session(other, graphrt::cpu()).load(source("mlp/deploy_factory.so"));
    FAIL() << "another runtime's load was handed the default runtime's modules";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kFailedPrecondition, e.kind()) << e.what();
    EXPECT_NE(std::string::npos, std::string(e.what()).find("another runtime")) << e.what();
    EXPECT_NE(std::string::npos, e.context_value("file").find("deploy_factory.so")) << e.what();
  }
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
  try {
    model->function("main");
    FAIL() << "a graph's function 'main' found";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ("function", e.context_value("option")) << e.what();
    EXPECT_NE(std::string::npos, std::string(e.what()).find("functions: default")) << e.what();
  }
}

}  // namespace
