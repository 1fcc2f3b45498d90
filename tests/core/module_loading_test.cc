// Loading every TVM fixture library: module tree, function names, factory
// contents, and the errors for bad files and missing functions.
#include <cstdio>
#include <functional>
#include <fstream>
#include <set>

#include "fixture_cases.h"
#include "graphrt/registry.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

std::set<std::string> graph_functions(const std::string& name) {
  auto graph = nlohmann::json::parse(read_text(fixture_path(name + "/deploy_graph.json")));
  std::set<std::string> names;
  for (const auto& node : graph["nodes"]) {
    if (node["op"] == "tvm_op") {
      std::string f = node["attrs"]["func_name"];
      if (f != "__nop" && f != "__copy") names.insert(f);
    }
  }
  return names;
}

bool cuda_registered() { return static_cast<bool>(registry_get("runtime.module.loadbinary_cuda")); }

std::vector<std::string> tree_keys(const Module& m) {
  std::vector<std::string> keys{m->type_key()};
  for (const Module& child : m->imports()) {
    for (const std::string& k : tree_keys(child)) keys.push_back(" " + k);
  }
  return keys;
}

}  // namespace

class FixtureLibraries : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureLibraries, FactoryTreeAndFunctions) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = GetParam();
  if (name == "mlp_cuda" && !cuda_registered()) GTEST_SKIP() << "this build has no cuda back end";
  Module root = load_module(fixture_path(name + "/deploy_factory.so"));
  std::vector<std::string> keys = tree_keys(root);
  std::printf("%s:\n%s", name.c_str(), describe_module_tree(root).c_str());
  ASSERT_EQ(keys[0], "GraphExecutorFactory");
  if (name == "byoc_ccompiler") {
    EXPECT_EQ(keys, (std::vector<std::string>{"GraphExecutorFactory", " const_loader", "  library"}));
  } else if (name == "mlp_cuda") {
    EXPECT_EQ(keys, (std::vector<std::string>{"GraphExecutorFactory", " library", "  cuda"}));
  } else {
    EXPECT_EQ(keys, (std::vector<std::string>{"GraphExecutorFactory", " library"}));
  }
  // Every function the graph calls is found through the factory's import.
  Module lib = root->imports()[0];
  for (const std::string& f : graph_functions(name)) {
    EXPECT_TRUE(lib->get_function(f, true)) << name << ": " << f;
  }
  EXPECT_TRUE(root->get_function("default"));
  EXPECT_FALSE(root->get_function("no_such_function"));
}

TEST_P(FixtureLibraries, KernelLibraryListsGraphFunctions) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = GetParam();
  if (name == "mlp_cuda" && !cuda_registered()) GTEST_SKIP() << "this build has no cuda back end";
  // The kernels-only library's root is the library itself, or the
  // const_loader above it for BYOC builds (whose blob still holds that record).
  Module lib = load_module(fixture_path(name + "/deploy_lib.so"));
  std::set<std::string> listed;
  std::function<void(const Module&)> collect = [&](const Module& m) {
    for (const std::string& n : m->function_names()) listed.insert(n);
    for (const Module& child : m->imports()) collect(child);
  };
  collect(lib);
  for (const std::string& f : graph_functions(name)) {
    EXPECT_TRUE(listed.count(f)) << name << " lists no " << f;
    EXPECT_TRUE(lib->get_function(f, true)) << name << ": " << f;
  }
}

TEST_P(FixtureLibraries, FactoryDecodesToThreeFileForm) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = GetParam();
  if (name == "mlp_cuda" && !cuda_registered()) GTEST_SKIP() << "this build has no cuda back end";
  Module root = load_module(fixture_path(name + "/deploy_factory.so"));
  std::string graph_json = call_function(root->get_function("get_graph_json"), ArgList()).as_string();
  auto expected_graph = nlohmann::json::parse(read_text(fixture_path(name + "/deploy_graph.json")));
  EXPECT_EQ(nlohmann::json::parse(graph_json), expected_graph);

  ParamList ours = load_param_dict(call_function(root->get_function("get_params_bytes"), ArgList()).as_string());
  ParamList theirs = load_param_dict(read_text(fixture_path(name + "/deploy_params.params")));
  ASSERT_EQ(ours.size(), theirs.size());
  std::map<std::string, NDArray> by_name(theirs.begin(), theirs.end());
  for (const auto& p : ours) {
    ASSERT_TRUE(by_name.count(p.first)) << p.first;
    const NDArray& other = by_name[p.first];
    ASSERT_EQ(p.second.shape(), other.shape()) << p.first;
    ASSERT_EQ(p.second.nbytes(), other.nbytes());
    EXPECT_EQ(0, std::memcmp(p.second->data, other->data, other.nbytes())) << p.first;
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, FixtureLibraries, ::testing::ValuesIn(all_tvm_cases()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(ModuleLoading, MissingFileNamesThePath) {
  try {
    load_module("/nonexistent/dir/model.so");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("file"), "/nonexistent/dir/model.so");
  }
}

TEST(ModuleLoading, NotAnElfFile) {
  std::string path = ::testing::TempDir() + "/graphrt_not_elf.so";
  std::ofstream(path) << "this is not a shared library";
  try {
    load_module(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not an ELF"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(ModuleLoading, MissingFunctionSuggestsCloseMatches) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = load_module(fixture_path("mlp/deploy_lib.so"));
  try {
    lib->require_function("tvmgen_default_fused_nn_softmx");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("tvmgen_default_fused_nn_softmx"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean: tvmgen_default_fused_nn_softmax"), std::string::npos) << msg;
  }
}

TEST(ModuleLoading, UndefinedImportsFailAtLoadNamingEverySymbol) {
  // Both loaders: dlopen resolves eagerly and then lists every gap, the ELF
  // loader checks its whole import table.
  for (const char* loader : {"dlopen", "elf"}) {
    LoadOptions options;
    options.loader = loader;
    try {
      load_module(GRAPHRT_MISSING_SYMBOLS_LIB, options);
      FAIL() << loader << ": expected an error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_NE(msg.find("graphrt_test_undefined_alpha"), std::string::npos) << msg;
      EXPECT_NE(msg.find("graphrt_test_undefined_beta"), std::string::npos) << msg;
      EXPECT_EQ(e.context_value("file"), GRAPHRT_MISSING_SYMBOLS_LIB) << msg;
    }
  }
  // Nothing was left half-loaded: a real model still loads and runs.
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = load_module(fixture_path("mlp/deploy_factory.so"));
  EXPECT_NO_THROW(lib->require_function("default"));
}

TEST(ModuleLoading, UnknownLoaderIsNamed) {
  try {
    LoadOptions options;
    options.loader = "bogus";
    load_module("/tmp/x.so", options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown library loader 'bogus'"), std::string::npos) << e.what();
  }
}

TEST(ModuleLoading, ContextFunctionPointersAreFilled) {
  GRAPHRT_REQUIRE_FIXTURES();
  // squeezenet's kernels reach the runtime only through these pointers.
  std::shared_ptr<Library> lib = load_library("dlopen", LibrarySource{fixture_path("squeezenet1.1/deploy_lib.so"), nullptr, 0});
  Module root = load_module_from_library(lib);
  for (const char* name : {"TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", "TVMBackendParallelLaunch",
                           "TVMAPISetLastError"}) {
    void** slot = static_cast<void**>(lib->symbol(std::string("__") + name));
    ASSERT_NE(slot, nullptr) << name;
    EXPECT_EQ(*slot, runtime_symbol(name)) << name;
  }
}
