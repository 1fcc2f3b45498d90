// The thread pool behind TVMBackendParallelLaunch, and parallel kernels run
// with 1 and 2 threads giving identical results.
#include <atomic>
#include <thread>
#include <vector>

#include "fixture_cases.h"
#include "graphrt/c_api.h"

extern "C" int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task);
extern "C" int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv);

using namespace graphrt;
using namespace graphrt_test;

namespace {
struct Counts {
  std::atomic<int> calls{0};
  std::atomic<int> mask{0};
  int num_task = 0;
  std::atomic<int> before_barrier{0};
  bool barrier_ok = true;
};

int count_task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  auto* c = static_cast<Counts*>(cdata);
  c->calls++;
  c->mask |= 1 << task_id;
  c->num_task = penv->num_task;
  c->before_barrier++;
  TVMBackendParallelBarrier(task_id, penv);
  if (c->before_barrier.load() != penv->num_task) c->barrier_ok = false;
  return 0;
}

int failing_task(int task_id, TVMParallelGroupEnv*, void*) {
  if (task_id == 0) return 0;
  TVMAPISetLastError("boom from a worker");
  return -1;
}
}  // namespace

TEST(ThreadPool, RunsEveryTaskOnceWithBarrier) {
  for (int threads : {1, 2, 3}) {
    ASSERT_EQ(0, graphrt_set_num_threads(threads));
    Counts c;
    ASSERT_EQ(0, TVMBackendParallelLaunch(count_task, &c, 0));
    EXPECT_EQ(c.num_task, threads);
    EXPECT_EQ(c.calls.load(), threads);
    EXPECT_EQ(c.mask.load(), (1 << threads) - 1);
    EXPECT_TRUE(c.barrier_ok);
  }
  graphrt_set_num_threads(0);
}

TEST(ThreadPool, WorkerErrorsArePropagated) {
  ASSERT_EQ(0, graphrt_set_num_threads(2));
  EXPECT_EQ(-1, TVMBackendParallelLaunch(failing_task, nullptr, 0));
  EXPECT_NE(std::string(TVMGetLastError()).find("Task 1 error: boom from a worker"), std::string::npos)
      << TVMGetLastError();
  ASSERT_EQ(0, graphrt_set_num_threads(1));
  EXPECT_EQ(0, TVMBackendParallelLaunch(failing_task, nullptr, 0));  // only task 0 runs
  graphrt_set_num_threads(0);
}

TEST(ThreadPool, ManyLaunchesInARow) {
  ASSERT_EQ(0, graphrt_set_num_threads(2));
  for (int i = 0; i < 2000; ++i) {
    Counts c;
    ASSERT_EQ(0, TVMBackendParallelLaunch(count_task, &c, 0));
    ASSERT_EQ(c.calls.load(), 2);
  }
  graphrt_set_num_threads(0);
}

TEST(ThreadPool, SqueezenetIdenticalWithOneAndTwoThreads) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module root = load_module(fixture_path("squeezenet1.1/deploy_factory.so"));
  std::vector<std::vector<uint8_t>> results;
  for (int threads : {1, 2}) {
    ASSERT_EQ(0, graphrt_set_num_threads(threads));
    auto ex = graph_executor_of(call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module());
    set_case_inputs(*ex, "squeezenet1.1");
    ex->run();
    NDArray out = ex->get_output(0);
    std::vector<uint8_t> bytes(out.nbytes());
    out.copy_to_bytes(bytes.data(), bytes.size());
    results.push_back(bytes);
    EXPECT_EQ("", compare_output(out, fixture_path("squeezenet1.1/output_0.npy"), 0));
  }
  EXPECT_EQ(results[0], results[1]);
  graphrt_set_num_threads(0);
}

// Resizing the pool while other threads launch on it: the running launches
// keep the pool they started on (before the fix the old pool was freed under
// them: a use-after-free under ASan, a hang or crash without).
TEST(ThreadPool, ResizeWhileOthersLaunch) {
  ASSERT_EQ(0, graphrt_set_num_threads(3));
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> launchers;
  for (int t = 0; t < 2; ++t) {
    launchers.emplace_back([&] {
      while (!stop.load()) {
        Counts c;
        if (TVMBackendParallelLaunch(count_task, &c, 0) != 0 || c.calls.load() != c.num_task || !c.barrier_ok)
          failures++;
      }
    });
  }
  for (int i = 0; i < 200; ++i) ASSERT_EQ(0, graphrt_set_num_threads(1 + i % 3));
  stop = true;
  for (std::thread& t : launchers) t.join();
  EXPECT_EQ(failures.load(), 0);
  graphrt_set_num_threads(0);
}
