#include "models/instance_pool.h"

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

void InstancePool::add(std::unique_ptr<Instance> instance) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(instance.get());
  all_.push_back(std::move(instance));
}

InstancePool::Lease InstancePool::acquire(int64_t max_waiting, Clock::time_point deadline, ModelMetrics* metrics) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (free_.empty()) {
    if (waiting_ >= max_waiting)
      throw Error(ErrorKind::kResourceExhausted,
                  "the model's queue is full (" + std::to_string(max_waiting) + " requests waiting); retry later")
          .with("field", "max_queue_size");
    ++waiting_;
    metrics->pending.fetch_add(1, std::memory_order_relaxed);
    const bool got = available_.wait_until(lock, deadline, [&] { return !free_.empty(); });
    --waiting_;
    metrics->pending.fetch_sub(1, std::memory_order_relaxed);
    if (!got)
      throw Error(ErrorKind::kInterrupted, "timed out waiting for a model instance").with("field", "timeout");
  }
  Instance* instance = free_.back();
  free_.pop_back();
  return Lease(this, instance);
}

bool InstancePool::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !free_.empty() && waiting_ == 0;
}

void InstancePool::release(Instance* instance) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(instance);
  }
  available_.notify_one();
}

}  // namespace graphrt_serve
