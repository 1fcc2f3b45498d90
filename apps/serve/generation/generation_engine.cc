#include "generation/generation_engine.h"

#include <algorithm>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

GenerationEngine::GenerationEngine(std::unique_ptr<KvCacheModel> model, int64_t max_queue_size,
                                   std::shared_ptr<ModelMetrics> metrics)
    : model_(std::move(model)),
      max_queue_size_(max_queue_size),
      metrics_(std::move(metrics)),
      capacity_pages_(pages_for(model_->config(), model_->config().model.max_total_seq_len)),
      thread_([this] { loop(); }) {}

GenerationEngine::~GenerationEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::shared_ptr<TokenStream> GenerationEngine::submit(GenerateRequest request) {
  Sequence s;
  s.request = std::move(request);
  s.stream = std::make_shared<TokenStream>();
  s.pages = pages_for(model_->config(), static_cast<int64_t>(s.request.input_ids.size()) + s.request.max_tokens);
  s.last_event = Clock::now();
  s.stream->set_cancel_callback([this] {
    { std::lock_guard<std::mutex> lock(mutex_); }  // the engine either sees the flag or is woken after it waits
    wake_.notify_all();
  });
  std::shared_ptr<TokenStream> stream = s.stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int64_t>(queue_.size()) >= max_queue_size_) {
      metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
      throw Error(ErrorKind::kResourceExhausted, "the model's generate queue is full (" +
                                                     std::to_string(max_queue_size_) + " requests wait; max_queue_size)");
    }
    queue_.push_back(std::move(s));
  }
  wake_.notify_all();
  return stream;
}

size_t GenerationEngine::load() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size() + running_count_;
}

void GenerationEngine::loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !running_.empty() || !queue_.empty(); });
      if (stopping_) break;
    }
    admit();
    for (size_t i = 0; i < running_.size();) {
      if (step(running_[i])) {
        ++i;
        continue;
      }
      end(running_[i]);
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    running_count_ = running_.size();
    // Requests that wait for room while nothing runs: only cancelled ones can be left (the
    // generator admits none that cannot fit an empty cache); the next admit() drops them.
  }
  fail_all(Error(ErrorKind::kFailedPrecondition, "the model was unloaded or the server is stopping"));
}

void GenerationEngine::admit() {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t max_sequences = model_->config().model.max_batch_size;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->stream->cancelled()) {
      it->stream->end_cancelled();
      metrics_->generate_cancelled.fetch_add(1, std::memory_order_relaxed);
      it = queue_.erase(it);
      continue;
    }
    // First come, first served: a request that does not fit keeps the ones behind it waiting.
    if (static_cast<int64_t>(running_.size()) >= max_sequences || reserved_pages_ + it->pages > capacity_pages_) break;
    it->id = next_id_++;
    try {
      model_->add_sequence(it->id);
    } catch (const Error& e) {
      it->stream->fail(e);
      metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
      it = queue_.erase(it);
      continue;
    }
    reserved_pages_ += it->pages;
    running_.push_back(std::move(*it));
    it = queue_.erase(it);
  }
  running_count_ = running_.size();
}

bool GenerationEngine::step(Sequence& s) {
  if (s.stream->cancelled()) {
    s.stream->end_cancelled();
    metrics_->generate_cancelled.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const Clock::time_point t0 = Clock::now();
  try {
    s.last_token = s.generated == 0 ? model_->prefill(s.id, s.request.input_ids) : model_->decode(s.id, s.last_token);
  } catch (const Error& e) {
    s.stream->fail(e);
    metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const Clock::time_point now = Clock::now();
  metrics_->exec_count.fetch_add(1, std::memory_order_relaxed);
  metrics_->compute_infer_ns.fetch_add(static_cast<uint64_t>(ns_since(t0)), std::memory_order_relaxed);
  metrics_->generated_tokens.fetch_add(1, std::memory_order_relaxed);
  const int64_t since = std::chrono::duration_cast<std::chrono::nanoseconds>(now - s.last_event).count();
  (s.generated == 0 ? metrics_->first_token_latency : metrics_->token_latency).observe(since);
  s.last_event = now;
  ++s.generated;
  const auto& stop = s.request.stop_token_ids;
  FinishReason reason = FinishReason::kNone;
  if (std::find(stop.begin(), stop.end(), s.last_token) != stop.end()) reason = FinishReason::kStop;
  else if (s.generated >= s.request.max_tokens) reason = FinishReason::kLength;
  s.stream->push_token(s.last_token, reason);
  if (reason == FinishReason::kNone) return true;
  metrics_->generate_success.fetch_add(1, std::memory_order_relaxed);
  return false;
}

// The sequence leaves the cache (its pages back to the free list) and its reservation ends.
void GenerationEngine::end(Sequence& s) {
  try {
    model_->remove_sequence(s.id);
  } catch (const Error&) {
    // Only a sequence the cache never had: nothing to give back.
  }
  reserved_pages_ -= s.pages;
}

void GenerationEngine::fail_all(const Error& why) {
  for (Sequence& s : running_) {
    s.stream->fail(why);
    end(s);
  }
  running_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  for (Sequence& s : queue_) s.stream->fail(why);
  queue_.clear();
  running_count_ = 0;
}

}  // namespace graphrt_serve
