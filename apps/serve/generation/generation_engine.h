// One model instance serving generate requests: a KV-cache model and the
// thread that drives it. Each admitted request is a sequence of the one cache
// (kv_state_add_sequence on admission, remove_sequence when it ends, fails or
// is cancelled). The model's decode takes one sequence ([1, 1] token ids), so
// steps are serialised on this thread: each turn admits what fits, then runs one
// step (a prefill, or a decode of one token) of every sequence in turn, so that
// concurrent sequences advance together, one token each per turn.
//
// Admission reserves a sequence's whole need, the cache pages of its prompt
// plus max_tokens, so that a sequence admitted never runs out of cache; at most
// max_batch_size sequences are in the cache at once; the rest wait in a queue.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "generation/generate_request.h"
#include "generation/kv_cache_model.h"
#include "generation/token_stream.h"
#include "metrics/metrics.h"

namespace graphrt_serve {

class GenerationEngine {
 public:
  GenerationEngine(std::unique_ptr<KvCacheModel> model, int64_t max_queue_size, std::shared_ptr<ModelMetrics> metrics);
  // Ends the thread; requests still queued or running get an error event.
  ~GenerationEngine();

  // Queues a request whose sizes the generator checked (max_tokens set). Throws
  // graphrt::Error (resource exhausted) when max_queue_size requests already wait.
  std::shared_ptr<TokenStream> submit(GenerateRequest request);
  // Sequences running plus requests waiting: the generator sends a request to the least loaded instance.
  size_t load() const;

 private:
  struct Sequence {
    int64_t id = 0;
    GenerateRequest request;
    std::shared_ptr<TokenStream> stream;
    int64_t pages = 0;
    int64_t generated = 0;
    int32_t last_token = 0;
    std::chrono::steady_clock::time_point last_event;
  };

  void loop();
  // Moves queued requests into the cache while they fit; drops cancelled ones.
  void admit();
  // One prefill or decode of `s`; false when the sequence ended (finished, failed or cancelled).
  bool step(Sequence& s);
  void end(Sequence& s);
  void fail_all(const graphrt::Error& why);

  std::unique_ptr<KvCacheModel> model_;
  const int64_t max_queue_size_;
  std::shared_ptr<ModelMetrics> metrics_;
  const int64_t capacity_pages_;
  mutable std::mutex mutex_;  // guards queue_, stopping_, running_count_
  std::condition_variable wake_;
  std::deque<Sequence> queue_;
  bool stopping_ = false;
  size_t running_count_ = 0;
  // The engine thread's own: the sequences in the cache.
  std::vector<Sequence> running_;
  int64_t reserved_pages_ = 0;
  int64_t next_id_ = 1;  // 0 was the model's probe
  std::thread thread_;
};

}  // namespace graphrt_serve
