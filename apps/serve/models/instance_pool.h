// The executors of one model version (Instance: a graphrt::Runner, or a set of them
// for batch exports) and the requests waiting for one of them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "metrics/metrics.h"
#include "protocol/infer_request.h"
#include "protocol/infer_response.h"

namespace graphrt_serve {

// One executor of a model; used by one request at a time.
class Instance {
 public:
  virtual ~Instance() = default;
  // `inputs` in the model's input order, each already checked against the model's metadata
  // (name, datatype, shape, bytes); fills every output in the model's order. Outputs may be
  // views of the instance's own memory: valid until its next run, so read them before handing
  // the instance back.
  virtual void run(const std::vector<const InputTensor*>& inputs, std::vector<OutputTensor>* outputs,
                   InferTimings* timings) = 0;
};

// The instances of a version and the requests waiting for one: at most
// `max_waiting` wait (beyond: resource exhausted, HTTP 429), each at most until its deadline.
class InstancePool {
 public:
  class Lease {
   public:
    Lease(InstancePool* pool, Instance* instance) : pool_(pool), instance_(instance) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), instance_(other.instance_) { other.instance_ = nullptr; }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { if (instance_) pool_->release(instance_); }
    Instance* operator->() const { return instance_; }

   private:
    InstancePool* pool_;
    Instance* instance_;
  };

  void add(std::unique_ptr<Instance> instance);
  // Throws graphrt::Error: resource exhausted when `max_waiting` requests already wait,
  // interrupted when `deadline` passes first.
  Lease acquire(int64_t max_waiting, std::chrono::steady_clock::time_point deadline, ModelMetrics* metrics);
  // An instance is free and no request waits for one (a hint: another may take it first).
  bool idle();

 private:
  void release(Instance* instance);
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<Instance>> all_;
  std::vector<Instance*> free_;
  int64_t waiting_ = 0;
};

}  // namespace graphrt_serve
