// A served model's generate side: its instances (one KV cache and engine
// thread each, config.json's instance_count), the checks a request must pass
// against the model (vocabulary, cache size), and the choice of instance.
#pragma once

#include <memory>
#include <vector>

#include "generation/generate_request.h"
#include "generation/generation_config.h"
#include "generation/generation_engine.h"
#include "generation/token_stream.h"
#include "graphrt/session.h"
#include "metrics/metrics.h"

namespace graphrt_serve {

class Generator {
 public:
  // `instances` KV-cache models over the Relax `model`, on its session's device. Throws
  // graphrt::Error naming the config field at fault (a missing function, a cache the model refuses).
  Generator(const graphrt::Model& model, const GenerationConfig& config, int instances, int64_t max_queue_size,
            std::shared_ptr<ModelMetrics> metrics);
  ~Generator();

  // Checks `request` against the model (sets its max_tokens when not given) and queues it on
  // the least loaded instance. Throws graphrt::Error naming the field at fault (out of range:
  // a token id outside the vocabulary, a prompt plus max_tokens longer than the cache holds),
  // or resource exhausted when the queue is full.
  std::shared_ptr<TokenStream> submit(GenerateRequest request);

  int64_t vocab_size() const { return vocab_; }

 private:
  void check(GenerateRequest& request) const;
  GenerationConfig config_;
  int64_t vocab_ = 0;
  std::shared_ptr<ModelMetrics> metrics_;  // a refused request counts as a failed generate
  std::vector<std::unique_ptr<GenerationEngine>> engines_;
};

}  // namespace graphrt_serve
