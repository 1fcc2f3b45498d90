// How an executor tells the thread pool that it is running, so that parallel
// launches from several executors at once share the cores instead of
// oversubscribing them (the pool itself is the core's, src/threading/thread_pool.h).
#pragma once

namespace graphrt {

// Marks the calling thread as running an executor for the scope's lifetime
// and a moment after (src/threading/run_activity.h).
// With k such threads, a launch uses at most threads - (k - 1) tasks: the
// other runs keep their cores busy, and more tasks would only oversubscribe.
class ThreadPoolRunScope {
 public:
  ThreadPoolRunScope();
  ~ThreadPoolRunScope();
  ThreadPoolRunScope(const ThreadPoolRunScope&) = delete;
  ThreadPoolRunScope& operator=(const ThreadPoolRunScope&) = delete;
};

}  // namespace graphrt
