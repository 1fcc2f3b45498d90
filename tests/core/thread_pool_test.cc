// The thread pool behind TVMBackendParallelLaunch, and parallel kernels run
// with 1 and 2 threads giving identical results.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "fixture_cases.h"
#include "graphrt/c_api.h"
#include "threading/run_activity.h"
#include "threading/thread_pool.h"

extern "C" int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task);
extern "C" int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv);

using namespace graphrt;
using namespace graphrt_test;

namespace {
struct Counts {
  std::atomic<int> calls{0};
  std::atomic<int> mask{0};
  std::atomic<int> num_task{0};  // atomics: every task writes them
  std::atomic<int> before_barrier{0};
  std::atomic<bool> barrier_ok{true};
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
    EXPECT_EQ(c.num_task.load(), threads);
    EXPECT_EQ(c.calls.load(), threads);
    EXPECT_EQ(c.mask.load(), (1 << threads) - 1);
    EXPECT_TRUE(c.barrier_ok.load());
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
        if (TVMBackendParallelLaunch(count_task, &c, 0) != 0 || c.calls.load() != c.num_task.load() || !c.barrier_ok)
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

namespace {
// Which thread ran each task of one launch.
struct TaskThreads {
  std::mutex mutex;
  std::vector<std::thread::id> by_task = std::vector<std::thread::id>(8);
  std::vector<int> runs = std::vector<int>(8, 0);
  int num_task = 0;
};

int record_thread(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  auto* t = static_cast<TaskThreads*>(cdata);
  std::lock_guard<std::mutex> lock(t->mutex);
  t->by_task[task_id] = std::this_thread::get_id();
  t->runs[task_id]++;
  t->num_task = penv->num_task;
  return 0;
}

// Restricts this thread (and the threads it creates) to one CPU for the scope.
class OneCpu {
 public:
  OneCpu() {
    ok_ = pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) == 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; ok_ && c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &saved_)) {
        CPU_SET(c, &one);
        break;
      }
    }
    ok_ = ok_ && pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
  }
  ~OneCpu() {
    if (ok_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};
}  // namespace

// A worker that has no core when its task is offered (here: the pool's threads
// share one CPU with the launcher) does not hold the launch up: the launcher
// takes the task back and runs it. Every task still runs exactly once with the
// num_task the kernel was given, and launches whose tasks meet at a barrier
// (which cannot be taken back) still complete.
TEST(ThreadPool, LauncherRunsTasksWorkersHaveNotStarted) {
  int taken_back = 0;
  {
    OneCpu pin;
    if (!pin.ok()) GTEST_SKIP() << "cannot set CPU affinity here";
    ASSERT_EQ(0, graphrt_set_num_threads(3));  // workers inherit the one-CPU mask
    for (int i = 0; i < 2000; ++i) {
      TaskThreads t;
      ASSERT_EQ(0, TVMBackendParallelLaunch(record_thread, &t, 0));
      ASSERT_EQ(t.num_task, 3);
      for (int task = 0; task < 3; ++task) ASSERT_EQ(t.runs[task], 1) << "launch " << i << " task " << task;
      EXPECT_EQ(t.by_task[0], std::this_thread::get_id());
      for (int task = 1; task < 3; ++task) taken_back += t.by_task[task] == std::this_thread::get_id();
      if (i % 10 == 0) {
        Counts c;
        ASSERT_EQ(0, TVMBackendParallelLaunch(count_task, &c, 0));
        ASSERT_EQ(c.calls.load(), 3);
        ASSERT_TRUE(c.barrier_ok.load());
      }
    }
  }
  graphrt_set_num_threads(0);  // a fresh pool without the one-CPU mask
  EXPECT_GT(taken_back, 0) << "no task ran on the launching thread in 2000 launches on one CPU";
}

// Several executors running at once (each run from its own thread) while the
// pool size changes: launches then use fewer tasks (the other runs hold the
// cores), workers stop spinning, offers are taken back; results stay
// bit-exact with TVM's.
TEST(ThreadPool, ConcurrentExecutorsBitExactAcrossThreadCounts) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = "mlp_linked_params";
  Module root = load_module(fixture_path(name + "/deploy_factory.so"));
  for (int threads : {2, 3, 4}) {
    ASSERT_EQ(0, graphrt_set_num_threads(threads));
    for (int executors : {2, 4}) {
      std::vector<std::shared_ptr<GraphExecutor>> exs;
      for (int i = 0; i < executors; ++i) {
        exs.push_back(graph_executor_of(call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module()));
        set_case_inputs(*exs.back(), name);
      }
      std::vector<std::string> failures(executors);
      std::vector<std::thread> runners;
      for (int i = 0; i < executors; ++i) {
        runners.emplace_back([&, i] {
          for (int r = 0; r < 100 && failures[i].empty(); ++r) {
            exs[i]->run();
            failures[i] = compare_output(exs[i]->get_output(0), fixture_path(name + "/output_0.npy"), 0);
          }
        });
      }
      for (std::thread& t : runners) t.join();
      for (int i = 0; i < executors; ++i)
        EXPECT_EQ("", failures[i]) << threads << " threads, executor " << i << " of " << executors;
    }
  }
  graphrt_set_num_threads(0);
}

// An executor profiling holds a core as run() does: launches from other
// executors' runs leave that core to it.
TEST(ThreadPool, ProfilingExecutorCountsAsRunning) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = "squeezenet1.1";
  Module root = load_module(fixture_path(name + "/deploy_factory.so"));
  auto profiled = graph_executor_of(call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module());
  set_case_inputs(*profiled, name);
  ASSERT_EQ(thread_pool_active_runs(), 0);
  std::atomic<bool> done{false};
  std::thread profiler([&] {
    profiled->profile(20, 1);
    done = true;
  });
  bool seen = false;
  while (!done.load() && !seen) seen = thread_pool_active_runs() == 1;
  profiler.join();
  EXPECT_TRUE(seen) << "the profiling executor never counted as running";
  EXPECT_EQ(thread_pool_active_runs(), 0);
}

// A thread that left its executor's run a moment ago, while other executors
// run too (runs of a loop on several threads), still holds its core: a launch
// from another run then uses one task and does not wake a worker to compete
// with that thread's next run. Once the moment has passed, or the thread has
// ended, the launch uses the worker again.
TEST(ThreadPool, RunThatJustEndedBesideAnotherStillHoldsItsCore) {
  using clock = std::chrono::steady_clock;
  ASSERT_EQ(0, graphrt_set_num_threads(2));
  std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kRunActivityLingerNs));  // earlier tests' runs expire
  std::atomic<int> runs_done{0}, launches_done{0};
  std::atomic<bool> finish{false};
  // Stamped inside the run, just before it ends: never later than the end itself, so a
  // launch that looks inside the linger is, however the runner thread is scheduled.
  std::atomic<clock::rep> left{0};
  int within_linger = 0;
  std::thread runner([&] {
    for (int r = 1; r <= 200; ++r) {
      {
        ThreadPoolRunScope run;
        left.store(clock::now().time_since_epoch().count());
      }
      runs_done.store(r);
      while (launches_done.load() < r) std::this_thread::yield();
    }
    while (!finish.load()) std::this_thread::yield();
    { ThreadPoolRunScope run; }
  });
  {
    ThreadPoolRunScope this_run;  // the runner's runs overlap this one
    for (int r = 1; r <= 200; ++r) {
      while (runs_done.load() < r) std::this_thread::yield();
      Counts c;
      clock::time_point launched = clock::now();
      ASSERT_EQ(0, TVMBackendParallelLaunch(count_task, &c, 0));
      // Only launches that surely began inside the linger say anything.
      if (launched - clock::time_point(clock::duration(left.load())) <=
          std::chrono::nanoseconds(kRunActivityLingerNs / 2)) {
        ++within_linger;
        EXPECT_EQ(c.num_task.load(), 1) << "a launch right after another thread's run took that thread's core";
      }
      launches_done.store(r);
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kRunActivityLingerNs));
    Counts late;
    ASSERT_EQ(0, TVMBackendParallelLaunch(count_task, &late, 0));
    EXPECT_EQ(late.num_task.load(), 2) << "a run that ended long ago still held a core";
    finish = true;
    runner.join();  // its last run, beside this one, ended just before it did
    Counts after_exit;
    ASSERT_EQ(0, TVMBackendParallelLaunch(count_task, &after_exit, 0));
    EXPECT_EQ(after_exit.num_task.load(), 2) << "a thread that ended still held a core";
  }
  EXPECT_GT(within_linger, 0) << "no launch came within the linger in 200 attempts";
  graphrt_set_num_threads(0);
}

// Runs that take turns on different threads (one request at a time, each on
// whichever thread is free) never overlap: the next run's launches get every
// core at once, though the thread of the run before is alive and just left.
TEST(ThreadPool, RunsTakingTurnsOnThreadsKeepEveryCore) {
  ASSERT_EQ(0, graphrt_set_num_threads(2));
  std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kRunActivityLingerNs));
  constexpr int kTurns = 100;
  std::atomic<int> turn{0};  // even: thread A's run, odd: thread B's
  std::atomic<int> narrow{0};
  auto take_turns = [&](int parity) {
    for (int t = parity; t < kTurns; t += 2) {
      while (turn.load() != t) std::this_thread::yield();
      {
        ThreadPoolRunScope run;
        Counts c;
        if (TVMBackendParallelLaunch(count_task, &c, 0) != 0 || c.num_task.load() != 2) ++narrow;
      }
      turn.store(t + 1);
    }
  };
  std::thread a(take_turns, 0), b(take_turns, 1);
  a.join();
  b.join();
  EXPECT_EQ(narrow.load(), 0) << "launches right after a run that overlapped nothing left a core idle";
  graphrt_set_num_threads(0);
}
