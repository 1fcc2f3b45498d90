// Per model and version counters with the meanings of Triton's metrics
// (success and failure counts, inferences, executions, cumulative request,
// queue and compute times), rendered in Prometheus' text format under
// graphrt's own names. Counters are atomics: the request path never locks.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "metrics/latency_histogram.h"

namespace graphrt_serve {

struct ModelMetrics {
  std::atomic<uint64_t> request_success{0};
  std::atomic<uint64_t> request_failure{0};
  std::atomic<uint64_t> inference_count{0};  // a batch of n counts n
  std::atomic<uint64_t> exec_count{0};       // model executions (batches)
  std::atomic<uint64_t> request_ns{0};       // end to end, decode to encode
  std::atomic<uint64_t> queue_ns{0};         // waiting for an instance
  std::atomic<uint64_t> compute_input_ns{0};
  std::atomic<uint64_t> compute_infer_ns{0};
  std::atomic<uint64_t> compute_output_ns{0};
  std::atomic<int64_t> pending{0};           // requests waiting for an instance now
  // Generate requests (language models, generation/): outcomes, tokens, and the latency of
  // each token as its sequence saw it (the first: from the request's arrival, with its wait
  // and prefill; the others: from the sequence's previous token).
  std::atomic<uint64_t> generate_success{0};
  std::atomic<uint64_t> generate_failure{0};
  std::atomic<uint64_t> generate_cancelled{0};  // the client went away
  std::atomic<uint64_t> generated_tokens{0};
  LatencyHistogram first_token_latency;
  LatencyHistogram token_latency;
  // Set for a language model (generate, OpenAI's API): only those get graphrt_generate_* series.
  std::atomic<bool> language_model{false};
  // An MLC folder's continuous batching (generation/text_engine.h): the sequences in the KV
  // cache and those waiting for room, the cache's pages and tokens in use, and the forward
  // passes (decode: one per step, its rows the sequences decoded together; prefill tokens).
  std::atomic<int64_t> running_sequences{0};
  std::atomic<int64_t> waiting_sequences{0};
  std::atomic<int64_t> kv_pages_in_use{0};
  std::atomic<int64_t> kv_pages_capacity{0};
  std::atomic<int64_t> kv_tokens_in_use{0};
  std::atomic<uint64_t> decode_passes{0};
  std::atomic<uint64_t> decode_pass_rows{0};
  std::atomic<uint64_t> decode_pass_ns{0};
  std::atomic<uint64_t> prefill_tokens{0};
  std::atomic<uint64_t> prefill_pass_ns{0};
};

// The phases of one request, measured where they happen.
struct InferTimings {
  int64_t queue_ns = 0, input_ns = 0, infer_ns = 0, output_ns = 0;
  int64_t inferences = 1;  // the request's batch rows where the model batches
  int64_t executions = 1;  // 0 for a request that rode in another's batched execution
};

// Nanoseconds from `t0` to now on the steady clock: the unit of every phase above.
inline int64_t ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

// Adds one request's outcome: its count, its end-to-end time, and for a successful one its
// phases, inferences and executions.
void record_request(ModelMetrics& m, bool ok, const InferTimings& timings, int64_t request_ns);

class Metrics {
 public:
  // The counters of a model version; the same object across unload and reload, so that
  // counters only grow, as Prometheus expects of a counter.
  std::shared_ptr<ModelMetrics> for_model(const std::string& model, const std::string& version);
  std::string render() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ModelMetrics>> models_;
};

}  // namespace graphrt_serve
