// Continuous batching on one LanguageModel: requests wait, are admitted into the KV cache when
// their whole need fits, step together (one decode pass, one prefill pass a step) and leave.
#include "graphrt/continuous_batcher.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <utility>

namespace graphrt {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

int64_t pages_for(int64_t tokens, int64_t page_size) { return (tokens + page_size - 1) / page_size; }

}  // namespace

struct ContinuousBatcher::Request {
  int64_t id = 0;
  int64_t sequence = -1;  // the KV cache's id once admitted
  std::vector<int32_t> prompt;
  size_t prefilled = 0;   // prompt tokens in the cache
  int64_t length = 0;     // tokens in the cache
  int32_t next_token = 0; // fed by the next decode pass once the prompt is in
  int64_t pages = 0;      // reserved at admission
  bool cancelled = false;
  bool ended = false;
  TextCallback on_text;
  std::unique_ptr<TextGeneration> generation;
  Clock::time_point admitted, first_token;

  bool decoding() const { return prefilled == prompt.size(); }
};

ContinuousBatcher::ContinuousBatcher(TextGenerator& generator, ContinuousBatcherOptions options)
    : generator_(generator), model_(generator.language_model()) {
  const LanguageModelOptions& sizes = model_.options();
  // The cache was made for max_batch_size sequences: more cannot run, whatever is asked.
  max_running_ = options.max_running > 0 ? std::min(options.max_running, sizes.max_batch_size) : sizes.max_batch_size;
  max_waiting_ = options.max_waiting;
  prefill_budget_ = options.prefill_tokens_per_step > 0 ? options.prefill_tokens_per_step : sizes.prefill_chunk_size;
  page_size_ = sizes.page_size;
  capacity_pages_ = pages_for(sizes.max_total_seq_len, page_size_);
  GRAPHRT_CHECK(max_running_ > 0 && max_waiting_ >= 0 && prefill_budget_ > 0 && page_size_ > 0,
                "continuous batcher sizes must be positive (max_running " + std::to_string(max_running_) +
                    ", max_waiting " + std::to_string(max_waiting_) + ", prefill_tokens_per_step " +
                    std::to_string(prefill_budget_) + ")");
}

ContinuousBatcher::~ContinuousBatcher() {
  for (const auto& r : running_) {
    if (r->ended) continue;
    try {
      model_.remove_sequence(r->sequence);
    } catch (...) {
      // A cache past use: nothing left to give back.
    }
  }
}

int64_t ContinuousBatcher::add(BatchedRequest request) {
  if (static_cast<int64_t>(waiting_.size()) >= max_waiting_)
    throw Error(ErrorKind::kResourceExhausted, "the queue of requests waiting for room in the KV cache is full (" +
                                                   std::to_string(max_waiting_) + " wait)")
        .with("option", "max_waiting");
  auto r = std::make_unique<Request>();
  // Checks the prompt against the sequence limit and the config's fields.
  r->generation = std::make_unique<TextGeneration>(generator_.start(request.prompt_ids, request.config));
  const int64_t prompt = static_cast<int64_t>(request.prompt_ids.size());
  const int64_t room = model_.max_sequence_length() - prompt;
  const int64_t max_new = request.config.max_tokens > 0 ? std::min(request.config.max_tokens, room + 1) : room + 1;
  // The last token sampled is never fed back.
  r->pages = pages_for(prompt + max_new - 1, page_size_);
  if (r->pages > capacity_pages_)
    throw Error(ErrorKind::kOutOfRange, "the request needs " + std::to_string(prompt + max_new - 1) +
                                            " tokens of KV cache (prompt and max_tokens); the cache holds " +
                                            std::to_string(capacity_pages_ * page_size_))
        .with("field", "max_tokens")
        .with("option", "max_total_seq_len");
  r->id = next_request_++;
  r->prompt = std::move(request.prompt_ids);
  r->on_text = std::move(request.on_text);
  r->generation->result().prompt_tokens = prompt;
  waiting_.push_back(std::move(r));
  return waiting_.back()->id;
}

void ContinuousBatcher::cancel(int64_t request) {
  for (auto& r : waiting_)
    if (r->id == request) r->cancelled = true;
  for (auto& r : running_)
    if (r->id == request) r->cancelled = true;
}

int64_t ContinuousBatcher::pages_in_use() const {
  int64_t pages = 0;
  for (const auto& r : running_) pages += pages_for(r->length, page_size_);
  return pages;
}

int64_t ContinuousBatcher::tokens_in_cache() const {
  int64_t tokens = 0;
  for (const auto& r : running_) tokens += r->length;
  return tokens;
}

BatchStepReport ContinuousBatcher::step() {
  BatchStepReport report;
  for (auto& r : running_)
    if (r->cancelled) end(*r, BatchEnd::kCancelled, report);
  sweep_ended();
  admit(report);
  run_decode(report);
  run_prefill(report);
  sweep_ended();
  return report;
}

void ContinuousBatcher::admit(BatchStepReport& report) {
  // Cancelled requests leave wherever they wait (they would hold places in the queue).
  for (auto& r : waiting_) {
    if (!r->cancelled) continue;
    r->ended = true;
    report.ended.push_back(BatchOutcome{r->id, BatchEnd::kCancelled, std::move(r->generation->result()), nullptr});
  }
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), [](const auto& r) { return r->ended; }),
                 waiting_.end());
  while (!waiting_.empty()) {
    Request& r = *waiting_.front();
    // First come, first served: a request that does not fit keeps those behind it waiting.
    if (static_cast<int64_t>(running_.size()) >= max_running_ || reserved_pages_ + r.pages > capacity_pages_) break;
    r.sequence = generator_.new_sequence_id();
    try {
      model_.add_sequence(r.sequence);
    } catch (const Error& e) {
      r.ended = true;
      report.ended.push_back(BatchOutcome{r.id, BatchEnd::kFailed, std::move(r.generation->result()),
                                          std::make_shared<const Error>(e)});
      waiting_.pop_front();
      continue;
    }
    r.admitted = Clock::now();
    reserved_pages_ += r.pages;
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

void ContinuousBatcher::run_decode(BatchStepReport& report) {
  std::vector<SequenceStep> steps;
  std::vector<Request*> pass;
  for (auto& r : running_) {
    if (r->ended || !r->decoding()) continue;
    steps.push_back({r->sequence, {r->next_token}});
    pass.push_back(r.get());
  }
  StepLogits logits;
  if (steps.empty() || !forward(steps, pass, report, &logits, &report.decode_s)) return;
  report.decode_sequences = static_cast<int64_t>(steps.size());
  for (size_t i = 0; i < pass.size(); ++i) {
    ++pass[i]->length;
    sample(*pass[i], logits.row(i), report);
  }
}

void ContinuousBatcher::run_prefill(BatchStepReport& report) {
  std::vector<SequenceStep> steps;
  std::vector<Request*> pass;
  int64_t budget = prefill_budget_;
  for (auto& r : running_) {
    if (budget == 0) break;
    if (r->ended || r->decoding()) continue;
    const int64_t left = static_cast<int64_t>(r->prompt.size() - r->prefilled);
    const int64_t n = std::min(left, budget);
    const auto from = r->prompt.begin() + static_cast<std::ptrdiff_t>(r->prefilled);
    steps.push_back({r->sequence, std::vector<int32_t>(from, from + n)});
    pass.push_back(r.get());
    budget -= n;
  }
  StepLogits logits;
  if (steps.empty() || !forward(steps, pass, report, &logits, &report.prefill_s)) return;
  for (size_t i = 0; i < pass.size(); ++i) {
    Request& r = *pass[i];
    const int64_t n = static_cast<int64_t>(steps[i].tokens.size());
    r.prefilled += static_cast<size_t>(n);
    r.length += n;
    report.prefill_tokens += n;
    if (r.decoding()) sample(r, logits.row(i), report);  // a prompt cut by the budget samples after its last chunk
  }
}

bool ContinuousBatcher::sample(Request& r, const float* row, BatchStepReport& report) {
  std::optional<int32_t> next;
  try {
    next = r.generation->step(row, static_cast<size_t>(model_.vocab_size()), r.on_text);
  } catch (const Error& e) {
    end(r, BatchEnd::kFailed, report, std::make_shared<const Error>(e));
    return false;
  } catch (const std::exception& e) {
    const std::string why = std::string("the request's text callback failed: ") + e.what();
    end(r, BatchEnd::kFailed, report, std::make_shared<const Error>(ErrorKind::kInternal, why));
    return false;
  }
  const auto now = Clock::now();
  GenerationResult& result = r.generation->result();
  if (result.tokens.size() == 1) {
    r.first_token = now;
    result.time_to_first_token_s = seconds_between(r.admitted, now);
  }
  result.decode_s = seconds_between(r.first_token, now);
  report.sampled.push_back(r.id);
  if (next) {
    r.next_token = *next;
    return true;
  }
  end(r, BatchEnd::kFinished, report);
  return false;
}

void ContinuousBatcher::end(Request& r, BatchEnd how, BatchStepReport& report, std::shared_ptr<const Error> error) {
  if (r.ended) return;
  r.ended = true;
  try {
    model_.remove_sequence(r.sequence);
  } catch (...) {
    // Only a sequence the cache no longer has: nothing to give back.
  }
  reserved_pages_ -= r.pages;
  r.length = 0;
  report.ended.push_back(BatchOutcome{r.id, how, std::move(r.generation->result()), std::move(error)});
}

bool ContinuousBatcher::forward(const std::vector<SequenceStep>& steps, std::vector<Request*>& pass,
                                BatchStepReport& report, StepLogits* logits, double* seconds) {
  const auto t0 = Clock::now();
  try {
    *logits = model_.step(steps);
  } catch (const Error& e) {
    fail_pass(pass, e, report);
    return false;
  }
  *seconds = seconds_between(t0, Clock::now());
  return true;
}

void ContinuousBatcher::fail_pass(std::vector<Request*>& pass, const Error& error, BatchStepReport& report) {
  const auto shared = std::make_shared<const Error>(error);
  for (Request* r : pass) end(*r, BatchEnd::kFailed, report, shared);
}

void ContinuousBatcher::sweep_ended() {
  running_.erase(std::remove_if(running_.begin(), running_.end(), [](const auto& r) { return r->ended; }),
                 running_.end());
}

}  // namespace graphrt
