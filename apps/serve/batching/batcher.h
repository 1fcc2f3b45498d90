// Dynamic batching: requests that arrive together run as one execution over their inputs
// concatenated along the first dimension, and every output is split back by rows.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "models/served_model.h"

namespace graphrt_serve {

class Batcher {
 public:
  // At most `max_rows` rows per execution; the first request of a batch waits up to `delay`
  // for more, then for a free instance (requests that arrive meanwhile join the batch). At
  // most `max_queue_size` requests (plus one batch) wait; beyond: resource exhausted.
  Batcher(int64_t max_rows, std::chrono::microseconds delay, int64_t max_queue_size, InstancePool* pool,
          ModelMetrics* metrics)
      : max_rows_(max_rows), delay_(delay), max_queue_size_(max_queue_size), pool_(pool), metrics_(metrics) {}

  // Runs `inputs` (model order, `rows` rows each) in a batch; returns this request's rows of
  // every output (copies: the instance is back in the pool by then). Throws graphrt::Error: resource exhausted when the queue is full,
  // interrupted when `deadline` passes before the request is in a batch, failed
  // precondition when an output is not batched along its first dimension.
  std::vector<OutputTensor> run(const std::vector<const InputTensor*>& inputs, int64_t rows,
                                std::chrono::steady_clock::time_point deadline, InferTimings* timings);

 private:
  struct Pending;
  void lead(std::unique_lock<std::mutex>& lock, Pending* me, std::chrono::steady_clock::time_point deadline);
  static void execute(const std::vector<Pending*>& batch, int64_t total, const InstancePool::Lease& instance);

  const int64_t max_rows_;
  const std::chrono::microseconds delay_;
  const int64_t max_queue_size_;
  InstancePool* const pool_;
  ModelMetrics* const metrics_;
  std::mutex mutex_;
  // Each waiting request sleeps on its own condition variable and is woken only when its
  // answer is ready or it becomes the next leader; the leader alone is woken by arrivals.
  // (One shared condition variable woke every waiting thread on every arrival: with 32
  // clients on 2 cores those wake-ups cost more than the batching saved.)
  std::condition_variable arrivals_;
  std::deque<Pending*> queue_;
  int64_t queued_rows_ = 0;
  bool forming_ = false;  // a leader is gathering the next batch
};

}  // namespace graphrt_serve
