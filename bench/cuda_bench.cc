// CUDA back-end benchmark: for every CUDA fixture (case.json target "cuda..."),
// median run latency node by node and with CUDA-graph replay, plus the cost
// of one kernel launch through the packed-function path.
//
//   cuda_bench [fixtures_dir] [--runs N] [--launches N]
//
// Needs a GPU; prints why and exits 0 when none is usable (so CI without a GPU
// can run it). Timings include a device->host copy of output 0 after each run,
// which is what waits for the GPU.
#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"
#include "backends/cuda/cuda_device_api.h"
#include "backends/cuda/cuda_module.h"
#include "backends/cuda/register.h"

using namespace graphrt;
using Clock = std::chrono::steady_clock;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

cuda_backend::CudaModuleNode* find_cuda(const Module& m) {
  if (m->type_key() == "cuda") return static_cast<cuda_backend::CudaModuleNode*>(m.get());
  for (const Module& i : m->imports()) {
    if (auto* c = find_cuda(i)) return c;
  }
  return nullptr;
}

// Median microseconds per run (run + copy of output 0 to the host).
double time_runs(const Module& ex, int runs, bool* graph_active) {
  auto executor = graph_executor_of(ex);
  for (const TensorInfo& info : executor->input_info()) {
    NDArray zeros = NDArray::empty(info.shape, info.dtype, DLDevice{kDLCPU, 0});
    std::memset(zeros->data, 0, zeros.nbytes());
    executor->set_input(info.name, zeros.handle());
  }
  TensorInfo out_info = executor->output_info().at(0);
  NDArray out = NDArray::empty(out_info.shape, out_info.dtype, DLDevice{kDLCPU, 0});
  for (int i = 0; i < 5; ++i) {  // warm-up: lazy module load, capture
    executor->run();
    executor->copy_output_to(0, out.handle());
  }
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    executor->run();
    executor->copy_output_to(0, out.handle());
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  *graph_active = executor->device_graph_active();
  return median(us);
}

// Microseconds per launch of the smallest all-handle kernel, grid=block=1,
// over 1 MiB scratch buffers.
double time_launches(cuda_backend::CudaModuleNode* cu, int launches, std::string* kernel) {
  const cuda_backend::CudaFunctionInfo* best = nullptr;
  for (const auto& e : cu->image().fmap) {
    bool handles = std::all_of(e.second.arg_types.begin(), e.second.arg_types.end(),
                               [](DLDataType t) { return t.code == kDLOpaqueHandle; });
    if (handles && (!best || e.second.arg_types.size() < best->arg_types.size())) best = &e.second;
  }
  if (!best) return -1;
  *kernel = best->name;
  cuda_backend::KernelPlan plan = cuda_backend::plan_kernel(*best);
  std::vector<NDArray> buffers;
  ArgList args;
  for (size_t i = 0; i < plan.args.size(); ++i) {
    buffers.push_back(NDArray::empty({1 << 18}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, 0}));
    std::vector<float> zeros(1 << 18, 0.0f);
    buffers.back().copy_from_bytes(zeros.data(), zeros.size() * 4);
    args.add_handle(buffers.back()->data);
  }
  for (size_t i = 0; i < plan.tag_slots.size(); ++i) args.add_int(1);
  if (plan.dyn_smem) args.add_int(0);
  PackedFunc f = cu->get_function(best->name);
  DeviceAPI* api = device_api(DLDevice{kDLCUDA, 0});
  TVMArgs a = args.args();
  RetValue ret;
  for (int i = 0; i < 100; ++i) f->call(a, &ret);
  api->synchronize(DLDevice{kDLCUDA, 0}, nullptr);
  auto t0 = Clock::now();
  for (int i = 0; i < launches; ++i) f->call(a, &ret);
  api->synchronize(DLDevice{kDLCUDA, 0}, nullptr);
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / launches;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fixtures = GRAPHRT_BENCH_FIXTURES_DIR;
  int runs = 200, launches = 20000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (a == "--launches" && i + 1 < argc) launches = std::atoi(argv[++i]);
    else fixtures = a;
  }
  runtime_init();
  try {
    cuda_backend::cuda_device_api()->check_available(DLDevice{kDLCUDA, 0});
  } catch (const Error& e) {
    std::printf("cuda_bench: no usable CUDA device (%s); nothing to measure\n", e.what());
    return 0;
  }
  std::vector<std::string> cases;
  if (DIR* d = opendir(fixtures.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string dir = fixtures + "/" + e->d_name;
      std::string cj = read_text(dir + "/case.json");
      if (cj.find("\"target\": \"cuda") != std::string::npos) cases.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(cases.begin(), cases.end());
  if (cases.empty()) {
    std::printf("cuda_bench: no CUDA fixtures under %s\n", fixtures.c_str());
    return 1;
  }
  std::printf("%-14s %14s %16s %8s %18s  %s\n", "case", "run_us(plain)", "run_us(graph)", "speedup", "launch_us", "kernel");
  for (const std::string& name : cases) {
    std::string dir = fixtures + "/" + name;
    try {
      Module factory = load_module(dir + "/deploy_factory.so");
      PackedFunc create = factory->require_function("create_with_options");
      Module plain = call_function(create, ArgList().add_string("").add_int(0).add_device(DLDevice{kDLCUDA, 0})).as_module();
      Module graph = call_function(create, ArgList().add_string("").add_int(1).add_device(DLDevice{kDLCUDA, 0})).as_module();
      bool active_plain = false, active_graph = false;
      double t_plain = time_runs(plain, runs, &active_plain);
      double t_graph = time_runs(graph, runs, &active_graph);
      std::string kernel = "-";
      double per_launch = -1;
      if (auto* cu = find_cuda(factory)) per_launch = time_launches(cu, launches, &kernel);
      std::printf("%-14s %14.2f %16.2f %8.2f %18.3f  %s%s\n", name.c_str(), t_plain, t_graph, t_plain / t_graph,
                  per_launch, kernel.c_str(), active_graph ? "" : "  (graph replay NOT active)");
    } catch (const std::exception& e) {
      std::printf("%-14s error: %s\n", name.c_str(), e.what());
    }
  }
  return 0;
}
