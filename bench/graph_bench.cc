// Graph executor benchmark (a program, not a test). Per CPU fixture: time from
// load to first-run-ready, median run latency, memory of TVM's plan vs the
// liveness re-plan; and per-node overhead measured on chain1000 (1000 tiny
// nodes): (median run time - sum of kernel self times) / nodes.
//
//   graph_bench [fixtures_dir] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"

using namespace graphrt;
using clock_type = std::chrono::steady_clock;

namespace {

double us_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Cost of one direct call of a tiny kernel (no executor), in nanoseconds.
double direct_call_ns(const Module& lib, const std::string& kernel) {
  TVMBackendPackedCFunc fn = lib->require_function(kernel)->backend_c_func();
  NDArray a = NDArray::empty({1, 4}, DLDataType{kDLFloat, 32, 1}, cpu());
  NDArray b = NDArray::empty({1, 4}, DLDataType{kDLFloat, 32, 1}, cpu());
  std::memset(a->data, 0, a.nbytes());
  TVMValue args[2];
  int codes[2] = {kTVMDLTensorHandle, kTVMDLTensorHandle};
  args[0].v_handle = a.handle();
  args[1].v_handle = b.handle();
  const int n = 200000;
  std::vector<double> samples;
  for (int rep = 0; rep < 5; ++rep) {
    clock_type::time_point t = clock_type::now();
    for (int i = 0; i < n; ++i) {
      TVMValue ret;
      int ret_code;
      fn(args, codes, 2, &ret, &ret_code, nullptr);
    }
    samples.push_back(us_since(t) * 1000.0 / n);
  }
  return median(samples);
}

void zero_inputs(GraphExecutor& ex) {
  for (const TensorInfo& in : ex.input_info()) {
    NDArray x = NDArray::empty(in.shape, in.dtype, cpu());
    std::memset(x->data, 0, x.nbytes());
    ex.set_input(in.name, x.handle());
  }
}

std::shared_ptr<GraphExecutor> load_ready(const std::string& path, double* ready_us) {
  clock_type::time_point start = clock_type::now();
  Module root = load_module(path);
  Module gmod = call_function(root->require_function("default"), ArgList().add_device(cpu())).as_module();
  auto ex = graph_executor_of(gmod);
  *ready_us = us_since(start);
  return ex;
}

std::vector<double> run_times(GraphExecutor& ex, int runs) {
  for (int i = 0; i < 5; ++i) ex.run();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    clock_type::time_point t = clock_type::now();
    ex.run();
    times.push_back(us_since(t));
  }
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "../shared/fixtures";
  int runs = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::atoi(argv[++i]);
    else dir = argv[i];
  }
  const char* cases[] = {"mlp", "multi_io", "squeezenet1.1", "chain1000", "mlp_linked_params", "byoc_ccompiler"};
  std::printf("%-18s %12s %12s %14s %14s\n", "fixture", "ready (ms)", "median (us)", "tvm plan (B)", "liveness (B)");
  try {
    for (const char* name : cases) {
      std::string path = dir + "/" + name + "/deploy_factory.so";
      if (!std::ifstream(path)) {
        std::printf("%-18s (missing: %s)\n", name, path.c_str());
        continue;
      }
      double ready_us = 0;
      auto ex = load_ready(path, &ready_us);
      zero_inputs(*ex);
      double med = median(run_times(*ex, std::string(name) == "squeezenet1.1" ? std::max(20, runs / 10) : runs));
      MemoryReport mem = ex->memory_report();
      std::printf("%-18s %12.3f %12.2f %14zu %14zu\n", name, ready_us / 1000, med, mem.tvm_plan_bytes,
                  mem.liveness_plan_bytes);
    }
    double ready_us = 0;
    auto chain = load_ready(dir + "/chain1000/deploy_factory.so", &ready_us);
    zero_inputs(*chain);
    double med = median(run_times(*chain, runs));
    size_t nodes = chain->profile(1).nodes.size();
    Module lib = load_module(dir + "/chain1000/deploy_lib.so");
    double direct_ns = direct_call_ns(lib, "tvmgen_default_fused_nn_relu");
    double per_node_ns = 1000.0 * med / nodes;
    std::printf("\nchain1000: %zu kernel nodes, median run %.2f us = %.1f ns per node\n", nodes, med, per_node_ns);
    std::printf("  direct call of one tiny kernel (relu 1x4, no executor): %.1f ns\n", direct_ns);
    std::printf("  per-node executor overhead ~ %.1f ns\n", std::max(0.0, per_node_ns - direct_ns));
  } catch (const Error& e) {
    std::fprintf(stderr, "graph_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
