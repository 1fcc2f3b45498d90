// A served MLC-LLM model folder (mlc-chat-config.json, tokenizer, weights, model library):
// the library's ContinuousBatcher on one engine thread. Requests (completions as they are,
// chats through the folder's conv_template) share the model's KV cache: each engine iteration
// is one batcher step (one decode pass over the running sequences, one prefill pass for those
// admitted), and each request's text goes to its TextStream as the library releases it. A
// stream cancelled by its front end (the client went away) frees its sequence at the next step.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "generation/text_stream.h"
#include "graphrt/continuous_batcher.h"
#include "graphrt/conversation.h"
#include "graphrt/generation_config.h"
#include "graphrt/session.h"
#include "graphrt/text_generation.h"
#include "metrics/metrics.h"

namespace graphrt_serve {

struct TextJob {
  bool chat = false;
  std::string prompt;                          // a completion's prompt, encoded as is
  std::vector<graphrt::ChatMessage> messages;  // a chat's messages
  graphrt::GenerationConfig config;
};

// How the folder is served: config.json's max_queue_size, and its "generation" keys that
// apply to an MLC folder (0: the library's default, docs/serving.md).
struct TextEngineOptions {
  int64_t max_queue_size = 64;      // requests waiting for room in the KV cache; one more: 429
  int64_t max_num_sequence = 0;     // generation.max_batch_size: sequences in the cache at once
  int64_t max_total_seq_len = 0;    // generation.max_total_seq_len: the KV cache's tokens
  int64_t prefill_chunk_size = 0;   // generation.prefill_chunk_size: prompt tokens per forward pass
};

class TextEngine {
 public:
  // Opens the folder on `device`. Throws graphrt::Error naming the file or field at fault.
  TextEngine(const std::string& folder, DLDevice device, const TextEngineOptions& options,
             std::shared_ptr<ModelMetrics> metrics);
  ~TextEngine();
  TextEngine(const TextEngine&) = delete;
  TextEngine& operator=(const TextEngine&) = delete;

  // Queues `job`; resource exhausted when max_queue_size requests already wait. A request the
  // cache can never hold fails on its stream, naming the setting that raises the limit.
  std::shared_ptr<TextStream> submit(TextJob job);

  // The request defaults of mlc-chat-config.json.
  const graphrt::GenerationConfig& defaults() const { return defaults_; }
  bool has_conv_template() const { return has_conv_; }
  int64_t vocab_size() const { return vocab_size_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    TextJob job;
    std::shared_ptr<TextStream> stream;
    Clock::time_point arrived;
  };
  struct Active {
    std::shared_ptr<TextStream> stream;
    Clock::time_point last_event;  // arrival, then each token
    bool sampled = false;
  };
  void loop();
  // Hands the new requests to the batcher (their prompts tokenized here, on the engine thread).
  void admit(std::deque<Pending>& arrived);
  void publish(graphrt::BatchStepReport& report);
  void end(int64_t request, graphrt::BatchOutcome& outcome);
  void update_gauges();
  void fail_all(const graphrt::Error& why);

  graphrt::Session session_;
  std::unique_ptr<graphrt::TextGenerator> generator_;
  std::unique_ptr<graphrt::ContinuousBatcher> batcher_;
  std::shared_ptr<ModelMetrics> metrics_;
  graphrt::GenerationConfig defaults_;
  bool has_conv_ = false;
  int64_t vocab_size_ = 0;
  int64_t max_queue_size_;
  std::mutex mutex_;  // guards inbox_, batcher_waiting_, stopping_
  std::condition_variable wake_;
  std::deque<Pending> inbox_;
  int64_t batcher_waiting_ = 0;  // requests the batcher holds waiting for room
  bool stopping_ = false;
  // The engine thread's own: each request in the batcher.
  std::map<int64_t, Active> active_;
  std::thread thread_;
};

}  // namespace graphrt_serve
