#include "batching/batcher.h"

#include <algorithm>
#include <exception>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

struct Batcher::Pending {
  const std::vector<const InputTensor*>* inputs = nullptr;
  int64_t rows = 0;
  Clock::time_point arrived;
  bool taken = false;  // in a batch: its answer will come
  bool done = false;
  std::condition_variable wake;
  std::vector<OutputTensor> outputs;
  std::exception_ptr error;
  InferTimings timings;
};

// The first request in the queue leads the next batch: it waits up to the delay for more rows
// (or until max_rows wait) and for a free instance, takes what fits in arrival order, hands the lead to the next
// request in the queue, and runs the batch on its own thread while that one gathers the next.
// The others wait for their slice of the answer.
std::vector<OutputTensor> Batcher::run(const std::vector<const InputTensor*>& inputs, int64_t rows,
                                       Clock::time_point deadline, InferTimings* timings) {
  Pending me;
  me.inputs = &inputs;
  me.rows = rows;
  me.arrived = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  if (static_cast<int64_t>(queue_.size()) >= std::max<int64_t>(max_queue_size_, 1) + max_rows_)
    throw Error(ErrorKind::kResourceExhausted,
                "the model's queue is full (" + std::to_string(queue_.size()) + " requests waiting); retry later")
        .with("field", "max_queue_size");
  queue_.push_back(&me);
  queued_rows_ += rows;
  metrics_->pending.fetch_add(1, std::memory_order_relaxed);
  if (forming_) arrivals_.notify_one();
  while (!me.done) {
    if (!me.taken && !forming_ && queue_.front() == &me) {
      lead(lock, &me, deadline);
      break;
    }
    if (!me.taken && Clock::now() >= deadline) {
      const bool was_front = queue_.front() == &me;
      queue_.erase(std::find(queue_.begin(), queue_.end(), &me));
      queued_rows_ -= rows;
      metrics_->pending.fetch_sub(1, std::memory_order_relaxed);
      if (was_front && !forming_ && !queue_.empty()) queue_.front()->wake.notify_one();
      throw Error(ErrorKind::kInterrupted, "timed out waiting for a batch").with("field", "timeout");
    }
    me.wake.wait_until(lock, me.taken ? Clock::time_point::max() : deadline);
  }
  if (me.error) std::rethrow_exception(me.error);
  *timings = me.timings;
  return std::move(me.outputs);
}

void Batcher::lead(std::unique_lock<std::mutex>& lock, Pending* me, Clock::time_point deadline) {
  forming_ = true;
  const Clock::time_point flush = std::min(me->arrived + delay_, deadline);
  while (queued_rows_ < max_rows_ && Clock::now() < flush) arrivals_.wait_until(lock, flush);
  // The batch is taken when an instance is free, not before: while every instance is busy,
  // arrivals keep joining it, so batches grow with the load even when the delay is 0.
  lock.unlock();
  ModelMetrics not_counted;  // the batch's requests already count as pending, in the queue
  InstancePool::Lease instance = pool_->acquire(INT64_MAX, Clock::time_point::max(), &not_counted);
  lock.lock();
  std::vector<Pending*> batch;
  int64_t total = 0;
  while (!queue_.empty() && total + queue_.front()->rows <= max_rows_) {
    batch.push_back(queue_.front());
    batch.back()->taken = true;
    total += queue_.front()->rows;
    queued_rows_ -= queue_.front()->rows;
    queue_.pop_front();
  }
  metrics_->pending.fetch_sub(static_cast<int64_t>(batch.size()), std::memory_order_relaxed);
  forming_ = false;
  if (!queue_.empty()) queue_.front()->wake.notify_one();  // the next leader
  lock.unlock();
  execute(batch, total, instance);
  lock.lock();
  for (Pending* p : batch) {
    p->done = true;
    if (p != me) p->wake.notify_one();
  }
}

// One execution over the batch's inputs concatenated in batch order; each request gets its
// rows of every output (or the error).
void Batcher::execute(const std::vector<Pending*>& batch, int64_t total, const InstancePool::Lease& instance) {
  try {
    const Clock::time_point started = Clock::now();
    const std::vector<const InputTensor*>& first = *batch.front()->inputs;
    std::vector<InputTensor> joined(first.size());
    std::vector<const InputTensor*> pointers;
    for (size_t i = 0; i < first.size(); ++i) {
      joined[i].name = first[i]->name;
      joined[i].datatype = first[i]->datatype;
      joined[i].shape = first[i]->shape;
      joined[i].shape[0] = total;
      size_t bytes = 0;
      for (const Pending* p : batch) bytes += (*p->inputs)[i]->size();
      joined[i].decoded.reserve(bytes);
      for (const Pending* p : batch) joined[i].decoded.append((*p->inputs)[i]->data(), (*p->inputs)[i]->size());
      pointers.push_back(&joined[i]);
    }
    std::vector<OutputTensor> all;
    InferTimings t;
    instance->run(pointers, &all, &t);
    for (const OutputTensor& o : all)
      if (o.shape.empty() || o.shape[0] != total || o.size() % static_cast<size_t>(total) != 0)
        throw Error(ErrorKind::kFailedPrecondition, "output " + shape_text(o.shape) + " of a batch of " +
                                                        std::to_string(total) + " is not batched along its first "
                                                        "dimension: this model cannot batch")
            .with("tensor", o.name).with("field", "max_batch_size");
    // Each request's rows are copied out of the run's outputs (views of the instance's memory,
    // which goes back to the pool when this batch is done, not when its requests are answered).
    size_t row = 0;
    for (Pending* p : batch) {
      for (const OutputTensor& o : all) {
        const size_t row_bytes = o.size() / static_cast<size_t>(total);
        OutputTensor part;
        part.name = o.name;
        part.datatype = o.datatype;
        part.shape = o.shape;
        part.shape[0] = p->rows;
        part.owned.assign(o.data() + row * row_bytes, static_cast<size_t>(p->rows) * row_bytes);
        p->outputs.push_back(std::move(part));
      }
      row += static_cast<size_t>(p->rows);
      p->timings = t;
      p->timings.queue_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(started - p->arrived).count();
      p->timings.inferences = p->rows;
      p->timings.executions = p == batch.front() ? 1 : 0;
    }
  } catch (...) {
    for (Pending* p : batch) p->error = std::current_exception();
  }
}

}  // namespace graphrt_serve
