// Continuous batching of text requests on one MLC-LLM model folder: concurrent requests share
// the model's KV cache, and each step() runs one forward pass of every running sequence's next
// token (batch_decode) and one of the prompts being admitted (batch_prefill, at most
// prefill_chunk_size tokens a step: a longer prompt is prefilled over several steps). Requests
// join between steps when the cache has room for them and leave when they finish, fail or are
// cancelled (their sequence removed from the cache at once).
//
//   graphrt::TextGenerator gen(session, "dist/tiny_gpt2_chat");
//   graphrt::ContinuousBatcher batcher(gen);
//   int64_t a = batcher.add({gen.tokenizer().encode("Once upon a time,"), config, print_piece});
//   int64_t b = batcher.add({gen.chat_prompt_ids(messages), config, {}});
//   while (!batcher.idle())
//     for (graphrt::BatchOutcome& o : batcher.step().ended) use(o.request, o.result);
//
// Admission reserves a request's whole need (its prompt plus max_tokens, or the sequence's
// limit when it sets none) in whole cache pages, so that an admitted sequence never runs out
// of cache; at most max_running sequences run at once; the others wait, first come first
// served, up to max_waiting. Each request has its own sampler, so a seed gives the same tokens
// whatever else is in the batch (up to the batch kernels' rounding). Not thread-safe: one
// thread adds, cancels and steps.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/text_generation.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

struct ContinuousBatcherOptions {
  int64_t max_running = 0;              // sequences in the cache at once; 0: the model's max_batch_size
  int64_t max_waiting = 64;             // requests waiting for room; one more is refused (resource exhausted)
  int64_t prefill_tokens_per_step = 0;  // prompt tokens prefilled per step; 0: the model's prefill_chunk_size
};

struct BatchedRequest {
  std::vector<int32_t> prompt_ids;  // what the model is given (TextGenerator::chat_prompt_ids for a chat)
  GenerationConfig config;
  TextCallback on_text;  // each released piece of text, called from step()
};

enum class BatchEnd { kFinished, kFailed, kCancelled };

struct BatchOutcome {
  int64_t request = 0;
  BatchEnd end = BatchEnd::kFinished;
  GenerationResult result;              // final when finished; what was made so far otherwise
  std::shared_ptr<const Error> error;   // when failed
};

// What one step did.
struct BatchStepReport {
  std::vector<int64_t> sampled;      // the requests that got a token in this step
  std::vector<BatchOutcome> ended;   // the requests that ended in this step
  int64_t decode_sequences = 0;      // rows of the decode pass
  int64_t prefill_tokens = 0;        // tokens of the prefill pass
  double decode_s = 0, prefill_s = 0;  // the model's forward passes (LanguageModel::step), sampling excluded
};

class ContinuousBatcher {
 public:
  // `generator` outlives the batcher; its LanguageModel is stepped only by the batcher meanwhile.
  explicit ContinuousBatcher(TextGenerator& generator, ContinuousBatcherOptions options = {});
  // Removes the sequences still in the cache.
  ~ContinuousBatcher();
  ContinuousBatcher(const ContinuousBatcher&) = delete;
  ContinuousBatcher& operator=(const ContinuousBatcher&) = delete;

  // Queues a request; returns its id. Refused at once, naming the limit ("option"): a request
  // that can never fit (no prompt token, a prompt leaving no room under the sequence limit:
  // out of range, "field" prompt, "option" max_total_seq_len; an invalid config names its
  // field) or a full queue (resource exhausted, "option" max_waiting).
  int64_t add(BatchedRequest request);
  // Ends a request at the next step (BatchEnd::kCancelled); an id not queued or running is ignored.
  void cancel(int64_t request);

  // One iteration: drops cancelled requests, admits what fits, runs the decode pass over the
  // running sequences and the prefill pass over the admitted prompts, samples each sequence
  // whose prompt is consumed. A request whose pass or callback fails ends kFailed; the others
  // go on. Nothing to do: an empty report.
  BatchStepReport step();

  bool idle() const { return running_.empty() && waiting_.empty(); }
  size_t running() const { return running_.size(); }
  size_t waiting() const { return waiting_.size(); }
  int64_t pages_in_use() const;     // cache pages the running sequences' tokens fill
  int64_t pages_reserved() const { return reserved_pages_; }
  int64_t capacity_pages() const { return capacity_pages_; }
  int64_t tokens_in_cache() const;  // the tokens the running sequences hold
  int64_t max_running() const { return max_running_; }

 private:
  struct Request;
  // Internal steps: hidden, unlike the class around them.
  __attribute__((visibility("hidden"))) void admit(BatchStepReport& report);
  __attribute__((visibility("hidden"))) void run_decode(BatchStepReport& report);
  __attribute__((visibility("hidden"))) void run_prefill(BatchStepReport& report);
  // Samples `r` from a row of logits; false when it ended (then it is in report.ended).
  __attribute__((visibility("hidden"))) bool sample(Request& r, const float* row, BatchStepReport& report);
  __attribute__((visibility("hidden"))) void end(Request& r, BatchEnd how, BatchStepReport& report,
                                         std::shared_ptr<const Error> error = nullptr);
  __attribute__((visibility("hidden"))) void fail_pass(std::vector<Request*>& pass, const Error& error,
                                                     BatchStepReport& report);
  // One forward pass of `steps`; false when the model refused it (then every request of `pass` failed).
  __attribute__((visibility("hidden"))) bool forward(const std::vector<SequenceStep>& steps,
                                                   std::vector<Request*>& pass, BatchStepReport& report,
                                                   StepLogits* logits, double* seconds);
  __attribute__((visibility("hidden"))) void sweep_ended();

  TextGenerator& generator_;
  LanguageModel& model_;
  int64_t max_running_, max_waiting_, prefill_budget_, page_size_, capacity_pages_;
  int64_t reserved_pages_ = 0;
  int64_t next_request_ = 1;
  std::deque<std::unique_ptr<Request>> waiting_;
  std::vector<std::unique_ptr<Request>> running_;  // in admission order
};

}  // namespace graphrt

#pragma GCC visibility pop
