// Launches of TVM-made kernels split into more tasks than threads
// (parallel_split.h): which kernels are split, into how many tasks, that every
// task runs once, and that kernels which call the barrier, kernels of
// unknown origin and short kernels keep one task per thread.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fixture_cases.h"
#include "graphrt/c_api.h"
#include "graphrt/library.h"
#include "module/library_module.h"
#include "threading/parallel_split.h"

extern "C" int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task);

using namespace graphrt;
using namespace graphrt_test;

namespace {

constexpr int kMaxTasks = 64;

struct TaskLog {
  std::atomic<int> num_task{0};
  std::atomic<int> runs[kMaxTasks] = {};
  std::chrono::microseconds work{0};
};

void busy_for(std::chrono::microseconds total) {
  const auto until = std::chrono::steady_clock::now() + total;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Work of `log->work` in all, cut into num_task chunks like a TVM parallel loop.
int timed_chunks(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  auto* log = static_cast<TaskLog*>(cdata);
  log->num_task = penv->num_task;
  if (task_id < kMaxTasks) log->runs[task_id]++;
  busy_for(log->work / penv->num_task);
  return 0;
}

// A second lambda with the same body: the table keys lambdas by address.
int other_timed_chunks(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  return timed_chunks(task_id, penv, cdata);
}

// Runs one launch; returns its num_task after checking every task ran once.
int launch_once(FTVMParallelLambda lambda, std::chrono::microseconds work, int requested = 0) {
  TaskLog log;
  log.work = work;
  EXPECT_EQ(0, TVMBackendParallelLaunch(lambda, &log, requested));
  const int tasks = log.num_task.load();
  for (int t = 0; t < kMaxTasks; ++t) EXPECT_EQ(t < tasks ? 1 : 0, log.runs[t].load()) << "task " << t;
  return tasks;
}

int last_of_launches(FTVMParallelLambda lambda, std::chrono::microseconds work, int launches) {
  int tasks = 0;
  for (int i = 0; i < launches; ++i) tasks = launch_once(lambda, work);
  return tasks;
}

// A library whose facts give it the code of the given lambdas (one byte
// each), and which may show the barrier.
class FakeKernelLibrary : public Library {
 public:
  explicit FakeKernelLibrary(std::vector<FTVMParallelLambda> code) {
    for (FTVMParallelLambda f : code) {
      LibraryRange r;
      r.start = reinterpret_cast<uintptr_t>(f);
      r.bytes = 1;
      r.code = true;
      facts_.ranges.push_back(r);
    }
  }
  void* symbol(const std::string& name) const override {
    return name == "__TVMBackendParallelBarrier" && barrier_slot ? const_cast<void**>(&slot_) : nullptr;
  }
  std::string origin() const override { return "<fake kernels>"; }
  void set_imports(std::vector<std::string> imports) { facts_.imports = std::move(imports); }
  bool barrier_slot = false;

 private:
  void* slot_ = nullptr;
};

// Allows what the module system would allow of a fake library, for the
// test's duration.
struct Allowed {
  explicit Allowed(const Library* library) : library(library) {
    parallel_split_allow_code(library, split_launch_code(*library));
  }
  ~Allowed() { parallel_split_forget_code(library); }
  const Library* library;
};

constexpr std::chrono::microseconds kLongKernel{2000};  // split as finely as allowed at 2 threads
constexpr std::chrono::microseconds kShortKernel{2};    // never split

struct TwoThreads {
  TwoThreads() { graphrt_set_num_threads(2); }
  ~TwoThreads() { graphrt_set_num_threads(0); }
};

}  // namespace

TEST(ParallelSplit, LongKernelOfAllowedLibrarySplitsAfterItsFirstLaunch) {
  TwoThreads pool;
  FakeKernelLibrary library({timed_chunks});
  Allowed allowed(&library);
  const uint64_t split_before = parallel_split_launches();
  EXPECT_EQ(2, launch_once(timed_chunks, kLongKernel));  // measured, not split
  const int tasks = last_of_launches(timed_chunks, kLongKernel, 4);
  EXPECT_EQ(2 * kSplitMaxTasksPerThread, tasks);
  EXPECT_GE(parallel_split_launches(), split_before + 4);
}

TEST(ParallelSplit, ShortKernelIsNeverSplit) {
  TwoThreads pool;
  FakeKernelLibrary library({timed_chunks});
  Allowed allowed(&library);
  EXPECT_EQ(2, last_of_launches(timed_chunks, kShortKernel, 20));
}

TEST(ParallelSplit, CodeOfNoAllowedLibraryIsNeverSplit) {
  TwoThreads pool;
  FakeKernelLibrary library({other_timed_chunks});  // allowed, but owns the other lambda
  Allowed allowed(&library);
  EXPECT_EQ(2, last_of_launches(timed_chunks, kLongKernel, 6));
}

TEST(ParallelSplit, LibraryThatMayCallTheBarrierIsNeverSplit) {
  TwoThreads pool;
  FakeKernelLibrary through_slot({timed_chunks});
  through_slot.barrier_slot = true;
  {
    Allowed allowed(&through_slot);
    EXPECT_EQ(2, last_of_launches(timed_chunks, kLongKernel, 6));
  }
  FakeKernelLibrary by_name({timed_chunks});
  by_name.set_imports({"memset", "TVMBackendParallelBarrier"});
  Allowed allowed(&by_name);
  EXPECT_EQ(2, last_of_launches(timed_chunks, kLongKernel, 6));
}

TEST(ParallelSplit, ForgottenLibraryIsNoLongerSplit) {
  TwoThreads pool;
  FakeKernelLibrary library({timed_chunks});
  {
    Allowed allowed(&library);
    EXPECT_EQ(2 * kSplitMaxTasksPerThread, last_of_launches(timed_chunks, kLongKernel, 5));
  }
  EXPECT_EQ(2, last_of_launches(timed_chunks, kLongKernel, 3));
}

TEST(ParallelSplit, KernelThatAsksForATaskCountGetsIt) {
  TwoThreads pool;
  FakeKernelLibrary library({timed_chunks});
  Allowed allowed(&library);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(2, launch_once(timed_chunks, kLongKernel, 2));
}

TEST(ParallelSplit, OneThreadIsNeverSplit) {
  graphrt_set_num_threads(1);
  FakeKernelLibrary library({timed_chunks});
  Allowed allowed(&library);
  EXPECT_EQ(1, last_of_launches(timed_chunks, kLongKernel, 5));
  graphrt_set_num_threads(0);
}

// Real libraries through the module loader, with each of its loaders.
namespace {
struct RecordedLaunch {
  int num_task = 0;
  std::vector<int32_t> runs;
};

RecordedLaunch call_record_tasks(const Module& lib) {
  NDArray counts = NDArray::empty({65}, DLDataType{kDLInt, 32, 1}, DLDevice{kDLCPU, 0});
  ArgList args;
  args.add_ndarray(counts);
  call_function(lib->get_function("record_tasks"), args);
  std::vector<int32_t> host(65);
  counts.copy_to_bytes(host.data(), host.size() * sizeof(int32_t));
  return RecordedLaunch{host[0], std::vector<int32_t>(host.begin() + 1, host.end())};
}

int num_task_after_launches(const std::string& path, const std::string& loader) {
  LoadOptions options;
  options.loader = loader;
  Module lib = load_module(path, options);
  RecordedLaunch last;
  for (int i = 0; i < 10; ++i) {
    last = call_record_tasks(lib);
    for (int t = 0; t < 64; ++t) EXPECT_EQ(t < last.num_task ? 1 : 0, last.runs[t]) << path << " task " << t;
  }
  return last.num_task;
}
}  // namespace

TEST(ParallelSplit, TvmStyleLibrarySplitsWithEitherLoader) {
  TwoThreads pool;
  for (const char* loader : {"dlopen", "elf"}) {
    const int tasks = num_task_after_launches(GRAPHRT_PARALLEL_TASKS_LIB, loader);
    EXPECT_GT(tasks, 2) << loader;
    EXPECT_EQ(0, tasks % 2) << loader;
  }
}

TEST(ParallelSplit, TvmStyleLibraryWithBarrierKeepsOneTaskPerThread) {
  TwoThreads pool;
  for (const char* path : {GRAPHRT_PARALLEL_TASKS_BARRIER_SLOT_LIB, GRAPHRT_PARALLEL_TASKS_BARRIER_NAME_LIB}) {
    for (const char* loader : {"dlopen", "elf"}) EXPECT_EQ(2, num_task_after_launches(path, loader)) << path << " " << loader;
  }
}

TEST(ParallelSplit, SqueezenetSplitRunsStayBitExact) {
  GRAPHRT_REQUIRE_FIXTURES();
  TwoThreads pool;
  Module root = load_module(fixture_path("squeezenet1.1/deploy_factory.so"));
  auto ex = graph_executor_of(call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module());
  set_case_inputs(*ex, "squeezenet1.1");
  const uint64_t split_before = parallel_split_launches();
  for (int run = 0; run < 12; ++run) {
    ex->run();
    EXPECT_EQ("", compare_output(ex->get_output(0), fixture_path("squeezenet1.1/output_0.npy"), 0)) << "run " << run;
  }
  EXPECT_GT(parallel_split_launches(), split_before);
}
