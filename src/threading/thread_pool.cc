#include "threading/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/packed_func.h"
#include "threading/parallel_split.h"
#include "threading/run_activity.h"

namespace graphrt {

namespace {

int concurrency_from_env() {
  for (const char* var : {"TVM_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* v = std::getenv(var);
    if (v && std::atoi(v) > 0) return std::atoi(v);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Busy-waits on `done`, yielding the core after a while: the thread being
// waited for may be descheduled when other executors keep the cores busy.
template <typename Done>
void spin_until(Done done) {
  for (int spin = 0; !done(); ++spin) {
    if (spin < 4096) {
      cpu_relax();
    } else {
      sched_yield();
    }
  }
}

// Sense-reversing barrier shared by the tasks of one launch.
struct Barrier {
  std::atomic<int> arrived{0};
  std::atomic<int> phase{0};
  int threads = 1;  // of the launch: a barrier of more tasks than this is never reached by all
};

struct Job {
  FTVMParallelLambda flambda = nullptr;
  void* cdata = nullptr;
  TVMParallelGroupEnv env{};
  int threads = 1;  // tasks beyond this many: see next_task
  // Written while tasks run: each on its own cache line, away from what the
  // tasks only read.
  alignas(64) Barrier barrier;
  alignas(64) std::atomic<int> pending{0};
  // Tasks past the one per thread (parallel_split.h): taken in turn by
  // whichever thread is done with its own.
  alignas(64) std::atomic<int> next_task{0};
  std::mutex error_mutex;
  std::string errors;
  ErrorKind error_kind = ErrorKind::kInvalidArgument;  // the first failed task's
};

thread_local bool tls_in_parallel = false;

void run_task(Job& job, int task_id) {
  tls_in_parallel = true;
  int rc = job.flambda(task_id, &job.env, job.cdata);
  tls_in_parallel = false;
  if (rc != 0) {
    std::lock_guard<std::mutex> lock(job.error_mutex);
    if (job.errors.empty()) job.error_kind = last_error_kind();
    job.errors += (job.errors.empty() ? "" : "\n") + std::string("Task ") + std::to_string(task_id) +
                  " error: " + last_error();
  }
}

// Runs task `task_id`, then the job's remaining tasks that no thread took yet.
void run_tasks(Job& job, int task_id) {
  run_task(job, task_id);
  if (job.env.num_task == job.threads) return;
  for (int t; (t = job.next_task.fetch_add(1, std::memory_order_relaxed)) < job.env.num_task;) run_task(job, t);
}

// One worker thread with its own mailbox. A launch claims idle workers
// (idle -> claimed) and offers each a task; the worker takes the offer
// (offered -> running) when it gets a core. A launcher that finished its own
// task takes back the offers not yet taken and runs those tasks itself, so a
// launch never waits for a worker that is asleep or has no core (another
// executor, another process). Taking back is safe with barriers: a task that
// passed a barrier saw every task of its launch arrive, so a launch whose task
// 0 returned while an offer was still open has no barrier.
class alignas(64) Worker {  // one per cache line: workers' mailboxes do not share lines
 public:
  explicit Worker(int pool_threads) : pool_threads_(pool_threads), thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  bool try_claim() {
    bool idle = false;
    return claimed_.compare_exchange_strong(idle, true, std::memory_order_acquire);
  }
  void offer(Job* job, int task_id) {
    task_id_ = task_id;
    slot_.store(job, std::memory_order_seq_cst);  // seq_cst with sleeping_: no lost wake-up
    if (sleeping_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_one();
    }
  }
  // True when the offer was still open: the caller runs the task, the worker is idle again.
  bool take_back(Job* job) {
    Job* open = job;
    if (!slot_.compare_exchange_strong(open, nullptr, std::memory_order_acq_rel)) return false;
    claimed_.store(false, std::memory_order_release);
    return true;
  }

 private:
  void loop() {
    for (;;) {
      Job* job = wait_for_offer();
      if (!job) return;
      Job* offered = job;
      if (!slot_.compare_exchange_strong(offered, running(), std::memory_order_acq_rel)) continue;  // taken back
      run_tasks(*job, task_id_);
      slot_.store(nullptr, std::memory_order_relaxed);
      claimed_.store(false, std::memory_order_release);
      job->pending.fetch_sub(1, std::memory_order_acq_rel);  // last touch: the job lives on the launcher's stack
    }
  }

  static Job* running() { return reinterpret_cast<Job*>(alignof(Job)); }  // never a job's address

  Job* open_offer() {
    Job* job = slot_.load(std::memory_order_acquire);
    return job == running() ? nullptr : job;
  }

  // Spins for a short while (a launch right after another costs no system
  // call), then sleeps until offer() or the destructor. Stops spinning early
  // when executors' runs occupy every pool thread's core (run_activity.h):
  // then no launch claims a worker (see ThreadPool::launch) and spinning only
  // takes a core from them.
  Job* wait_for_offer() {
    using clock = std::chrono::steady_clock;
    clock::time_point until = clock::now() + std::chrono::microseconds(200);
    for (int spin = 0;; ++spin) {
      if (Job* job = open_offer()) return job;
      if ((spin & 63) == 63) {
        if (run_activity_busy() >= pool_threads_ || clock::now() > until) break;
        // Past the first few microseconds, offer the core to any other runnable
        // thread now and then (sched_yield returns at once when there is none):
        // when other programs hold the other cores, a spinning worker would
        // otherwise take a whole time slice from the executor it serves.
        if (spin >= 1024) sched_yield();
      }
      cpu_relax();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleeping_.store(true, std::memory_order_seq_cst);
    Job* job;
    wake_.wait(lock, [&] { return (job = open_offer()) != nullptr || stop_; });
    sleeping_.store(false, std::memory_order_relaxed);
    return stop_ ? nullptr : job;
  }

  const int pool_threads_;
  std::atomic<Job*> slot_{nullptr};  // null, an offered job, or running()
  std::atomic<bool> claimed_{false};
  std::atomic<bool> sleeping_{false};
  int task_id_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

class ThreadPool {
 public:
  explicit ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
    for (int i = 1; i < threads_; ++i) workers_.push_back(std::make_unique<Worker>(threads_));
  }
  int threads() const { return threads_; }

  int launch(FTVMParallelLambda flambda, void* cdata, int num_task) {
    if (tls_in_parallel) {
      set_last_error("nested TVMBackendParallelLaunch inside a parallel task is not supported",
                     ErrorKind::kUnsupported);
      return -1;
    }
    int wanted = (num_task <= 0 || num_task > threads_) ? threads_ : num_task;
    // Cores already kept busy by other executors' runs are not this launch's to use.
    int others = run_activity_busy_others();
    if (others > 0) wanted = std::max(1, std::min(wanted, threads_ - others));
    Worker* claimed[kMaxClaim];
    int helpers = 0;
    for (auto& w : workers_) {
      if (helpers + 1 >= wanted || helpers == kMaxClaim) break;
      if (w->try_claim()) claimed[helpers++] = w.get();
    }
    Job job;
    job.flambda = flambda;
    job.cdata = cdata;
    job.threads = helpers + 1;
    // TVM kernels split their work by num_task: one task per thread, or more
    // where parallel_split.h allows (never when the kernel asked for a number).
    ParallelSplit split{job.threads, nullptr};
    if (num_task <= 0 && helpers > 0) split = parallel_split_plan(flambda, job.threads);
    job.env.num_task = split.tasks;
    job.next_task.store(job.threads, std::memory_order_relaxed);
    job.barrier.threads = job.threads;
    job.env.sync_handle = helpers > 0 ? &job.barrier : nullptr;
    job.pending.store(helpers, std::memory_order_relaxed);
    const auto start = split.entry ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    for (int i = 0; i < helpers; ++i) claimed[i]->offer(&job, i + 1);
    run_tasks(job, 0);
    // Offers not taken yet: run here rather than wait for a worker to get a core.
    for (int i = helpers - 1; i >= 0; --i) {
      if (claimed[i]->take_back(&job)) {
        run_tasks(job, i + 1);
        job.pending.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    spin_until([&] { return job.pending.load(std::memory_order_acquire) == 0; });
    if (split.entry)
      parallel_split_record(split.entry, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::steady_clock::now() - start).count());
    if (!job.errors.empty()) {
      set_last_error(job.errors, job.error_kind);
      return -1;
    }
    return 0;
  }

 private:
  static constexpr int kMaxClaim = 256;
  const int threads_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

// Process-wide, not the Runtime's: TVM's C ABI forces it (kernels call
// TVMBackendParallelLaunch with no context, on the hot path).
// The current pool. A launch holds its own reference, so resizing while
// other threads launch swaps the pool and the old one is joined when its last
// launch returns, never under a running launch.
std::mutex g_pool_mutex;
std::shared_ptr<ThreadPool>& pool_slot() {
  static std::shared_ptr<ThreadPool> pool;
  return pool;
}

std::shared_ptr<ThreadPool> pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  auto& slot = pool_slot();
  if (!slot) slot = std::make_shared<ThreadPool>(concurrency_from_env());
  return slot;
}

}  // namespace

int thread_pool_max_concurrency() { return pool()->threads(); }
int thread_pool_active_runs() { return run_activity_inside(); }

void thread_pool_set_max_concurrency(int n) {
  auto fresh = std::make_shared<ThreadPool>(n > 0 ? n : concurrency_from_env());
  std::shared_ptr<ThreadPool> old;
  {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    old = std::move(pool_slot());
    pool_slot() = std::move(fresh);
  }
  // `old` is released here, outside the lock; launches still holding it keep it alive.
}

int thread_pool_launch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  std::shared_ptr<ThreadPool> p = pool();
  if (p->threads() == 1 || num_task == 1) {
    TVMParallelGroupEnv env{nullptr, 1};
    int rc = flambda(0, &env, cdata);
    if (rc != 0) set_last_error("Task 0 error: " + last_error(), last_error_kind());
    return rc == 0 ? 0 : -1;
  }
  return p->launch(flambda, cdata, num_task);
}

int thread_pool_barrier(int, TVMParallelGroupEnv* penv) {
  if (!penv || penv->num_task <= 1 || !penv->sync_handle) return 0;
  auto* barrier = static_cast<Barrier*>(penv->sync_handle);
  if (penv->num_task > barrier->threads) {  // a split launch (parallel_split.h): waiting would never end
    set_last_error("TVMBackendParallelBarrier called by a kernel whose launch has " + std::to_string(penv->num_task) +
                   " tasks on " + std::to_string(barrier->threads) +
                   " threads; the kernel's library was not known to call the barrier",
                   ErrorKind::kInternal);
    return -1;
  }
  int phase = barrier->phase.load(std::memory_order_acquire);
  if (barrier->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == penv->num_task) {
    barrier->arrived.store(0, std::memory_order_relaxed);
    barrier->phase.fetch_add(1, std::memory_order_acq_rel);
  } else {
    spin_until([&] { return barrier->phase.load(std::memory_order_acquire) != phase; });
  }
  return 0;
}

}  // namespace graphrt
