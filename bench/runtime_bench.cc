// What a deployer measures, per model (a program, not a test): load to ready,
// median and best run latency, peak memory added by loading and running, and the
// throughput of 1..K executors each run from its own thread. Every model is
// measured in a fresh child process, so its peak memory is its own.
//
//   runtime_bench [--runs N] [--concurrent K] [--seconds S] MODEL...
//
// A MODEL is a one-file export (.so or .tar), or a folder holding deploy_factory.so. Inputs are
// zeros: timings do not depend on the values. Thread count: TVM_NUM_THREADS.
// For the side-by-side with TVM's runtime from Python, see README.md.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/args.h"
#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"

using namespace graphrt;
using clock_type = std::chrono::steady_clock;

namespace {

struct Settings {
  int runs = 50;
  int concurrent = 4;
  double seconds = 2.0;
};

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

long rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      long kb = 0;
      status >> kb;
      return kb;
    }
    status.ignore(1 << 12, '\n');
  }
  return 0;
}

std::shared_ptr<GraphExecutor> make_executor(const Module& root) {
  Module gmod = call_function(root->require_function("default"), ArgList().add_device(cpu())).as_module();
  auto ex = graph_executor_of(gmod);
  for (const TensorInfo& in : ex->input_info()) {
    NDArray x = NDArray::empty(in.shape, in.dtype, cpu());
    std::memset(x->data, 0, x.nbytes());
    ex->set_input(in.name, x.handle());
  }
  return ex;
}

// Runs per second of k executors, each run in a loop from its own thread.
double throughput(const std::vector<std::shared_ptr<GraphExecutor>>& executors, int k, double seconds) {
  std::atomic<bool> stop{false};
  std::vector<long> counts(k, 0);
  std::vector<std::thread> threads;
  clock_type::time_point start = clock_type::now();
  for (int i = 0; i < k; ++i) {
    threads.emplace_back([&, i] {
      while (!stop.load(std::memory_order_relaxed)) {
        executors[i]->run();
        ++counts[i];
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  double elapsed = ms_since(start) / 1000;
  long total = 0;
  for (long c : counts) total += c;
  return total / elapsed;
}

// One model, in the calling (child) process; prints one line.
int measure(const std::string& dir, const Settings& s) {
  struct stat st;
  const bool is_dir = stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  std::string path = is_dir ? dir + "/deploy_factory.so" : dir;
  runtime_init();  // the runtime's own start-up is not the model's load time
  long base_kb = rss_kb();
  clock_type::time_point start = clock_type::now();
  Module root = load_module(path);
  std::shared_ptr<GraphExecutor> ex = make_executor(root);
  double load_ms = ms_since(start);
  ex->run();
  std::vector<double> times;
  for (int i = 0; i < s.runs; ++i) {
    clock_type::time_point t = clock_type::now();
    ex->run();
    times.push_back(ms_since(t));
  }
  std::sort(times.begin(), times.end());
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  double peak_mb = (usage.ru_maxrss - base_kb) / 1024.0;
  std::string name = dir.substr(dir.find_last_of('/') + 1);
  // The best run next to the median: on a shared machine the median moves with
  // the neighbours, the best much less.
  std::printf("%-20s load %8.2f ms  run %9.3f ms (best %9.3f)  peak+ %7.1f MB", name.c_str(), load_ms,
              times[times.size() / 2], times.front(), peak_mb);
  std::vector<std::shared_ptr<GraphExecutor>> executors{ex};
  for (int k = 1; k <= s.concurrent; ++k) {
    while (static_cast<int>(executors.size()) < k) {
      executors.push_back(make_executor(root));
      executors.back()->run();
    }
    std::printf("  tput%d %9.1f/s", k, throughput(executors, k, s.seconds));
  }
  std::printf("\n");
  return 0;
}

const graphrt_apps::AppHelp kHelp = {
    "runtime_bench", "[options] MODEL...",
    "Measures what a deployer measures, per model, each in a fresh process: load to ready, median and best\n"
    "run latency, peak memory added, and runs per second of 1..K executors each run from its own thread.\n"
    "A MODEL is a one-file export (.so or .tar) or a folder holding deploy_factory.so; inputs are zeros.\n"
    "Threads per run: TVM_NUM_THREADS (default: the number of cores).",
    "  runtime_bench deploy.so\n"
    "  runtime_bench --runs 20 --concurrent 2 --seconds 0.2 ../shared/fixtures/mlp\n"};

const std::vector<graphrt_apps::FlagSpec> kFlags = {
    {"--runs", true, false, "N", "timed runs for the latency median and best (default: 50)"},
    {"--concurrent", true, false, "K", "measure throughput with 1..K executors (default: 4; 0 skips it)"},
    {"--seconds", true, false, "S", "how long each throughput measurement lasts (default: 2)"},
};

int run(int argc, char** argv) {
  Settings s;
  graphrt_apps::Args args(kHelp, kFlags);
  if (!args.parse(argc, argv)) return 0;
  s.runs = static_cast<int>(args.get_int("--runs", 50, 1, 100000000));
  s.concurrent = static_cast<int>(args.get_int("--concurrent", 4, 0, 1024));
  s.seconds = args.get_double("--seconds", 2.0, 0.0, 86400.0);
  std::vector<std::string> dirs = args.positional();
  if (dirs.empty()) throw graphrt_apps::UsageError("no MODEL given");
  int failures = 0;
  for (std::string& dir : dirs) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      try {
        int rc = measure(dir, s);
        std::fflush(stdout);
        std::_Exit(rc);
      } catch (const Error& e) {
        std::fprintf(stderr, "runtime_bench: %s: %s\n", dir.c_str(), e.what());
        std::fflush(stdout);
        std::_Exit(1);
      }
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("runtime_bench", run, argc, argv); }
