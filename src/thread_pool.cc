#include "thread_pool.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/packed_func.h"

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

// Sense-reversing barrier shared by the tasks of one launch.
struct Barrier {
  std::atomic<int> arrived{0};
  std::atomic<int> phase{0};
};

struct Job {
  FTVMParallelLambda flambda = nullptr;
  void* cdata = nullptr;
  TVMParallelGroupEnv env{};
  Barrier barrier;
  std::atomic<int> pending{0};
  std::mutex error_mutex;
  std::string errors;
};

thread_local bool tls_in_parallel = false;

class ThreadPool {
 public:
  explicit ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  int threads() const { return threads_; }

  int launch(FTVMParallelLambda flambda, void* cdata, int num_task) {
    if (tls_in_parallel) {
      set_last_error("nested TVMBackendParallelLaunch inside a parallel task is not supported");
      return -1;
    }
    int tasks = (num_task <= 0 || num_task > threads_) ? threads_ : num_task;
    std::lock_guard<std::mutex> serial(launch_mutex_);  // one launch at a time per pool
    Job job;
    job.flambda = flambda;
    job.cdata = cdata;
    job.env.num_task = tasks;
    job.env.sync_handle = &job.barrier;
    job.pending.store(tasks - 1);
    if (tasks > 1) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = &job;
        active_tasks_ = tasks;
        generation_.fetch_add(1, std::memory_order_release);
      }
      wake_.notify_all();
    }
    run_task(job, 0);
    while (job.pending.load(std::memory_order_acquire) != 0) cpu_relax();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = nullptr;  // the job lives on this stack frame
      active_tasks_ = 0;
    }
    if (!job.errors.empty()) {
      set_last_error(job.errors);
      return -1;
    }
    return 0;
  }

 private:
  static void run_task(Job& job, int task_id) {
    tls_in_parallel = true;
    int rc = job.flambda(task_id, &job.env, job.cdata);
    tls_in_parallel = false;
    if (rc != 0) {
      std::lock_guard<std::mutex> lock(job.error_mutex);
      job.errors += (job.errors.empty() ? "" : "\n") + std::string("Task ") + std::to_string(task_id) +
                    " error: " + last_error();
    }
  }

  void worker_loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      wait_for_generation(seen);
      Job* job;
      int tasks;
      {
        // job_ and generation_ change together under the mutex, so each job
        // is seen exactly once even when this worker wakes late.
        std::lock_guard<std::mutex> lock(mutex_);
        if (stop_) return;
        seen = generation_.load();
        job = job_;
        tasks = active_tasks_;
      }
      if (job && index < tasks) {
        run_task(*job, index);
        job->pending.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  void wait_for_generation(uint64_t seen) {
    for (int spin = 0; spin < 20000; ++spin) {
      if (generation_.load(std::memory_order_acquire) != seen) return;
      cpu_relax();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return generation_.load() != seen; });
  }

  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::mutex launch_mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  Job* job_ = nullptr;
  int active_tasks_ = 0;
  bool stop_ = false;
};

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
    if (rc != 0) set_last_error("Task 0 error: " + last_error());
    return rc == 0 ? 0 : -1;
  }
  return p->launch(flambda, cdata, num_task);
}

int thread_pool_barrier(int, TVMParallelGroupEnv* penv) {
  if (!penv || penv->num_task <= 1 || !penv->sync_handle) return 0;
  auto* barrier = static_cast<Barrier*>(penv->sync_handle);
  int phase = barrier->phase.load(std::memory_order_acquire);
  if (barrier->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == penv->num_task) {
    barrier->arrived.store(0, std::memory_order_relaxed);
    barrier->phase.fetch_add(1, std::memory_order_acq_rel);
  } else {
    while (barrier->phase.load(std::memory_order_acquire) == phase) cpu_relax();
  }
  return 0;
}

}  // namespace graphrt
