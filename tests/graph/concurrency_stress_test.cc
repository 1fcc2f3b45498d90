// Concurrency: loads of one .so share one module tree (and so one image
// context), and a stress run of threads loading, creating, running and
// destroying executors while the thread pool is resized gives TVM's outputs.
// Built and run under ThreadSanitizer by scripts/test.sh.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "fixture_cases.h"
#include "graphrt/c_api.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

std::shared_ptr<GraphExecutor> executor_from(const Module& root) {
  return graph_executor_of(call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module());
}

std::string check_outputs(GraphExecutor& ex, const std::string& name) {
  double tol = case_json(name).value("tolerance", 0.0);
  for (int i = 0; i < ex.num_outputs(); ++i) {
    std::string diff = compare_output(ex.get_output(i), fixture_path(name + "/output_" + std::to_string(i) + ".npy"), tol);
    if (!diff.empty()) return name + " output " + std::to_string(i) + ": " + diff;
  }
  return "";
}

// Sets the case's inputs, runs, and compares with TVM's outputs ("" when equal).
std::string run_case(GraphExecutor& ex, const std::string& name) {
  set_case_inputs(ex, name);
  ex.run();
  return check_outputs(ex, name);
}

// Inputs bound without copying: the arrays outlive the run.
std::vector<NDArray> set_inputs_zero_copy(GraphExecutor& ex, const std::string& name) {
  std::vector<NDArray> held;
  for (const TensorInfo& info : ex.input_info()) {
    NDArray a = npy_to_ndarray(read_npy(fixture_path(name + "/input_" + info.name + ".npy")));
    ex.set_input_zero_copy(ex.input_index(info.name), a.handle());
    held.push_back(a);
  }
  return held;
}

double stress_seconds() {
  const char* v = std::getenv("GRAPHRT_STRESS_SECONDS");
  return v && std::atof(v) > 0 ? std::atof(v) : 2.0;
}

}  // namespace

// Two loads of one path share the dlopen'ed image, hence its __tvm_module_ctx:
// they must get one tree. Before, each load overwrote the context with its own
// root, and freeing the later load left the earlier one's BYOC callbacks
// reaching a freed module.
TEST(Concurrency, LoadsOfOneImageShareOneTree) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = fixture_path("byoc_ccompiler/deploy_factory.so");
  Module first = load_module(path);
  std::shared_ptr<GraphExecutor> ex = executor_from(first);
  {
    Module second = load_module(path);
    EXPECT_EQ(first.get(), second.get());
    first = Module();  // the tree lives on through `second` and the executor
    auto other = executor_from(second);
    EXPECT_EQ("", run_case(*other, "byoc_ccompiler"));
  }
  EXPECT_EQ("", run_case(*ex, "byoc_ccompiler"));
  // Once every user is gone, the next load builds a fresh tree that works.
  ex.reset();
  Module again = load_module(path);
  auto fresh = executor_from(again);
  EXPECT_EQ("", run_case(*fresh, "byoc_ccompiler"));
}

// An executor keeps its factory, the root of the tree, alive. Before, it held
// only the library: a later load of the same image, made after the first root
// was dropped, built a second tree, pointed the image's __tvm_module_ctx at it
// and re-ran the BYOC constant set-up; once that tree was freed, the first
// executor's BYOC kernels called back into freed modules.
TEST(Concurrency, ExecutorKeepsItsTreeForLaterLoads) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = fixture_path("byoc_ccompiler/deploy_factory.so");
  std::shared_ptr<GraphExecutor> ex = executor_from(load_module(path));
  {
    Module again = load_module(path);
    EXPECT_EQ(again->ref_count(), 2) << "a second tree was built while the first executor lives";
    auto other = executor_from(again);
    EXPECT_EQ("", run_case(*other, "byoc_ccompiler"));
  }
  EXPECT_EQ("", run_case(*ex, "byoc_ccompiler"));
}

TEST(Concurrency, StressLoadCreateRunDestroy) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::vector<std::string> cases = {"byoc_ccompiler", "multi_io", "mlp"};
  // Executors that live through the whole run: params are shared from them.
  std::vector<Module> long_roots;
  std::vector<std::shared_ptr<GraphExecutor>> long_lived;
  for (const std::string& name : cases) {
    long_roots.push_back(load_module(fixture_path(name + "/deploy_factory.so")));
    long_lived.push_back(executor_from(long_roots.back()));
  }
  long_roots.clear();  // module unloaded by this owner while its executors live

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(stress_seconds());
  std::atomic<bool> stop{false};
  std::atomic<int> runs{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(failures_mutex);
    failures.push_back(what);
  };

  auto worker = [&](int id) {
    for (int iter = 0; !stop.load(); ++iter) {
      const size_t c = static_cast<size_t>(id + iter) % cases.size();
      const std::string& name = cases[c];
      try {
        std::shared_ptr<GraphExecutor> ex;
        std::vector<NDArray> held;
        switch ((id + iter) % 3) {
          case 0: {  // load, create, drop the module before running
            Module root = load_module(fixture_path(name + "/deploy_factory.so"));
            ex = executor_from(root);
            set_case_inputs(*ex, name);
            break;
          }
          case 1: {  // three-file form sharing params with a long-lived executor
            Module lib = load_module(fixture_path(name + "/deploy_lib.so"));
            ex = create_graph_executor(read_text(fixture_path(name + "/deploy_graph.json")), lib, "", {cpu()});
            ex->share_params(*long_lived[c], read_text(fixture_path(name + "/deploy_params.params")));
            held = set_inputs_zero_copy(*ex, name);
            break;
          }
          default: {  // the embedded ELF loader where it can run the case
            LoadOptions options;
            options.loader = name == "byoc_ccompiler" ? "dlopen" : "elf";
            Module root = load_module(fixture_path(name + "/deploy_factory.so"), options);
            ex = executor_from(root);
            held = set_inputs_zero_copy(*ex, name);
          }
        }
        ex->run();
        std::string diff = check_outputs(*ex, name);
        if (!diff.empty()) fail(diff);
        runs++;
      } catch (const std::exception& e) {
        fail(name + ": " + e.what());
      }
    }
  };
  auto long_runner = [&] {  // the long-lived executors keep running meanwhile
    while (!stop.load()) {
      for (size_t c = 0; c < cases.size(); ++c) {
        set_case_inputs(*long_lived[c], cases[c]);
        long_lived[c]->run();
        std::string diff = check_outputs(*long_lived[c], cases[c]);
        if (!diff.empty()) fail("long-lived " + diff);
      }
    }
  };
  auto resizer = [&] {
    for (int i = 0; !stop.load(); ++i) {
      graphrt_set_num_threads(1 + i % 3);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  };

  std::vector<std::thread> threads;
  for (int id = 0; id < 4; ++id) threads.emplace_back(worker, id);
  threads.emplace_back(long_runner);
  threads.emplace_back(resizer);
  while (std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop = true;
  for (std::thread& t : threads) t.join();
  graphrt_set_num_threads(0);
  EXPECT_GT(runs.load(), 0);
  for (const std::string& f : failures) ADD_FAILURE() << f;
}
