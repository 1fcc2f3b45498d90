#include "generation/text_engine.h"

#include <exception>
#include <utility>

#include "graphrt/error.h"
#include "graphrt/runtime.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

// The text of each token a result's logprobs name (the sampled ones and their alternatives).
std::map<int32_t, std::string> token_texts(const graphrt::Tokenizer& tokenizer, const graphrt::GenerationResult& r) {
  std::map<int32_t, std::string> out;
  for (const graphrt::SampledToken& s : r.sampled) {
    out.emplace(s.token, tokenizer.decode({s.token}));
    for (const graphrt::TokenLogprob& t : s.top_logprobs) out.emplace(t.token, tokenizer.decode({t.token}));
  }
  return out;
}

graphrt::MlcFolderOptions folder_options(const TextEngineOptions& o) {
  graphrt::MlcFolderOptions f;
  f.max_num_sequence = o.max_num_sequence;
  f.max_total_seq_len = o.max_total_seq_len;
  f.prefill_chunk_size = o.prefill_chunk_size;
  return f;
}

// The library names its own option; a server user sets config.json's key instead.
Error with_setting(const Error& e) {
  const std::string option = e.context_value("option");
  if (option != "max_total_seq_len") return e;
  Error named(e.kind(), e.message() + " (a sequence holds at most the model's context window, or config.json's "
                                      "generation.max_total_seq_len where smaller; generation.max_total_seq_len is "
                                      "also the KV cache's size, shared by all sequences)");
  const std::string field = e.context_value("field");
  if (!field.empty()) named.with("field", field);
  named.with("setting", "generation.max_total_seq_len");
  return named;
}

int64_t since_ns(std::chrono::steady_clock::time_point t0, std::chrono::steady_clock::time_point t1) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

}  // namespace

TextEngine::TextEngine(const std::string& folder, DLDevice device, const TextEngineOptions& options,
                       std::shared_ptr<ModelMetrics> metrics)
    : session_(graphrt::runtime(), device), metrics_(std::move(metrics)), max_queue_size_(options.max_queue_size) {
  generator_ = std::make_unique<graphrt::TextGenerator>(session_, folder, folder_options(options));
  graphrt::ContinuousBatcherOptions batching;
  batching.max_waiting = max_queue_size_;
  batcher_ = std::make_unique<graphrt::ContinuousBatcher>(*generator_, batching);
  defaults_ = generator_->default_config();
  has_conv_ = !generator_->conv_template().name.empty() || !generator_->conv_template().roles.empty();
  vocab_size_ = generator_->language_model().vocab_size();
  metrics_->language_model.store(true, std::memory_order_relaxed);
  metrics_->kv_pages_capacity.store(batcher_->capacity_pages(), std::memory_order_relaxed);
  thread_ = std::thread([this] { loop(); });
}

TextEngine::~TextEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::shared_ptr<TextStream> TextEngine::submit(TextJob job) {
  auto stream = std::make_shared<TextStream>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int64_t>(inbox_.size()) + batcher_waiting_ >= max_queue_size_) {
      metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
      throw Error(ErrorKind::kResourceExhausted, "the model's queue is full (" + std::to_string(max_queue_size_) +
                                                     " requests wait for room in the KV cache; config.json's "
                                                     "max_queue_size)")
          .with("field", "max_queue_size")
          .with("setting", "max_queue_size");
    }
    inbox_.push_back(Pending{std::move(job), stream, Clock::now()});
  }
  wake_.notify_all();
  return stream;
}

void TextEngine::loop() {
  for (;;) {
    std::deque<Pending> arrived;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !inbox_.empty() || !batcher_->idle(); });
      if (stopping_) break;
      arrived.swap(inbox_);
      // They wait in the batcher now, until a step admits them: the queue bound still counts them.
      batcher_waiting_ += static_cast<int64_t>(arrived.size());
    }
    admit(arrived);
    for (auto& [request, active] : active_)
      if (active.stream->cancelled()) batcher_->cancel(request);
    graphrt::BatchStepReport report;
    try {
      report = batcher_->step();
    } catch (const Error& e) {
      fail_all(e);
      continue;
    } catch (const std::exception& e) {
      fail_all(Error(ErrorKind::kInternal, std::string("the engine step failed: ") + e.what()));
      continue;
    }
    // Gauges first: a client that has its answer and reads the metrics finds its sequence gone.
    update_gauges();
    publish(report);
  }
  fail_all(Error(ErrorKind::kFailedPrecondition, "the model was unloaded or the server is stopping"));
}

void TextEngine::admit(std::deque<Pending>& arrived) {
  for (Pending& p : arrived) {
    if (p.stream->cancelled()) {
      p.stream->end_cancelled();
      metrics_->generate_cancelled.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    try {
      graphrt::BatchedRequest request;
      request.prompt_ids =
          p.job.chat ? generator_->chat_prompt_ids(p.job.messages) : generator_->tokenizer().encode(p.job.prompt);
      request.config = p.job.config;
      request.on_text = [stream = p.stream.get()](const std::string& piece) { stream->push_piece(piece); };
      const int64_t id = batcher_->add(std::move(request));
      active_[id] = Active{p.stream, p.arrived, false};
    } catch (const Error& e) {
      p.stream->fail(with_setting(e));
      metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
    } catch (const std::exception& e) {
      p.stream->fail(Error(ErrorKind::kInternal, std::string("generation failed: ") + e.what()));
      metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void TextEngine::publish(graphrt::BatchStepReport& report) {
  const Clock::time_point now = Clock::now();
  for (int64_t request : report.sampled) {
    auto it = active_.find(request);
    if (it == active_.end()) continue;
    Active& a = it->second;
    (a.sampled ? metrics_->token_latency : metrics_->first_token_latency).observe(since_ns(a.last_event, now));
    a.sampled = true;
    a.last_event = now;
  }
  metrics_->generated_tokens.fetch_add(report.sampled.size(), std::memory_order_relaxed);
  if (report.decode_sequences > 0) {
    metrics_->decode_passes.fetch_add(1, std::memory_order_relaxed);
    metrics_->decode_pass_rows.fetch_add(static_cast<uint64_t>(report.decode_sequences), std::memory_order_relaxed);
    metrics_->decode_pass_ns.fetch_add(static_cast<uint64_t>(report.decode_s * 1e9), std::memory_order_relaxed);
  }
  if (report.prefill_tokens > 0) {
    metrics_->prefill_tokens.fetch_add(static_cast<uint64_t>(report.prefill_tokens), std::memory_order_relaxed);
    metrics_->prefill_pass_ns.fetch_add(static_cast<uint64_t>(report.prefill_s * 1e9), std::memory_order_relaxed);
  }
  for (graphrt::BatchOutcome& outcome : report.ended) end(outcome.request, outcome);
}

void TextEngine::end(int64_t request, graphrt::BatchOutcome& outcome) {
  auto it = active_.find(request);
  if (it == active_.end()) return;
  TextStream& stream = *it->second.stream;
  switch (outcome.end) {
    case graphrt::BatchEnd::kFinished: {
      std::map<int32_t, std::string> texts = token_texts(generator_->tokenizer(), outcome.result);
      stream.finish(std::move(outcome.result), std::move(texts));
      metrics_->generate_success.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    case graphrt::BatchEnd::kCancelled:
      stream.end_cancelled();
      metrics_->generate_cancelled.fetch_add(1, std::memory_order_relaxed);
      break;
    case graphrt::BatchEnd::kFailed:
      stream.fail(outcome.error ? with_setting(*outcome.error) : Error(ErrorKind::kInternal, "generation failed"));
      metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
      break;
  }
  active_.erase(it);
}

void TextEngine::update_gauges() {
  const auto relaxed = std::memory_order_relaxed;
  metrics_->running_sequences.store(static_cast<int64_t>(batcher_->running()), relaxed);
  metrics_->waiting_sequences.store(static_cast<int64_t>(batcher_->waiting()), relaxed);
  metrics_->kv_pages_in_use.store(batcher_->pages_in_use(), relaxed);
  metrics_->kv_tokens_in_use.store(batcher_->tokens_in_cache(), relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  batcher_waiting_ = static_cast<int64_t>(batcher_->waiting());
}

void TextEngine::fail_all(const Error& why) {
  // The batcher ends with the engine: its destructor removes the sequences still in the cache.
  for (auto& [request, active] : active_) {
    active.stream->fail(why);
    metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
  }
  active_.clear();
  graphrt::ContinuousBatcherOptions batching;
  batching.max_waiting = max_queue_size_;
  batcher_ = std::make_unique<graphrt::ContinuousBatcher>(*generator_, batching);  // the old one removes its sequences
  std::deque<Pending> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left.swap(inbox_);
    batcher_waiting_ = 0;
  }
  for (Pending& p : left) p.stream->fail(why);
  update_gauges();
}

}  // namespace graphrt_serve
