#include "generation/text_engine.h"

#include <exception>
#include <utility>

#include "graphrt/error.h"
#include "graphrt/runtime.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

// Thrown from the text callback of a request whose client went away: it unwinds the library's
// generation, whose guard removes the sequence from the cache.
struct Cancelled {};

// The text of each token a result's logprobs name (the sampled ones and their alternatives).
std::map<int32_t, std::string> token_texts(const graphrt::Tokenizer& tokenizer, const graphrt::GenerationResult& r) {
  std::map<int32_t, std::string> out;
  for (const graphrt::SampledToken& s : r.sampled) {
    out.emplace(s.token, tokenizer.decode({s.token}));
    for (const graphrt::TokenLogprob& t : s.top_logprobs) out.emplace(t.token, tokenizer.decode({t.token}));
  }
  return out;
}

}  // namespace

TextEngine::TextEngine(const std::string& folder, DLDevice device, int64_t max_queue_size)
    : session_(graphrt::runtime(), device), max_queue_size_(max_queue_size) {
  generator_ = std::make_unique<graphrt::TextGenerator>(session_, folder);
  defaults_ = generator_->default_config();
  has_conv_ = !generator_->conv_template().name.empty() || !generator_->conv_template().roles.empty();
  vocab_size_ = generator_->language_model().vocab_size();
  thread_ = std::thread([this] { loop(); });
}

TextEngine::~TextEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    if (running_) running_->cancel();  // stops at its next piece of text
  }
  wake_.notify_all();
  thread_.join();
  for (Pending& p : queue_) p.stream->end_cancelled();
}

std::shared_ptr<TextStream> TextEngine::submit(TextJob job) {
  auto stream = std::make_shared<TextStream>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int64_t>(queue_.size()) >= max_queue_size_)
      throw Error(ErrorKind::kResourceExhausted, "the model's queue is full (" + std::to_string(max_queue_size_) +
                                                     " requests wait; config.json's max_queue_size)")
          .with("field", "max_queue_size");
    queue_.push_back(Pending{std::move(job), stream});
  }
  wake_.notify_all();
  return stream;
}

void TextEngine::loop() {
  for (;;) {
    Pending pending;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      pending = std::move(queue_.front());
      queue_.pop_front();
      running_ = pending.stream;
    }
    run(pending);
    std::lock_guard<std::mutex> lock(mutex_);
    running_.reset();
  }
}

void TextEngine::run(Pending& pending) {
  TextStream& stream = *pending.stream;
  if (stream.cancelled()) return stream.end_cancelled();
  const graphrt::TextCallback on_text = [&stream](const std::string& piece) {
    if (stream.cancelled()) throw Cancelled{};
    stream.push_piece(piece);
  };
  try {
    const TextJob& job = pending.job;
    graphrt::GenerationResult result = job.chat ? generator_->chat(job.messages, job.config, on_text)
                                                : generator_->stream(job.prompt, job.config, on_text);
    std::map<int32_t, std::string> texts = token_texts(generator_->tokenizer(), result);
    stream.finish(std::move(result), std::move(texts));
  } catch (const Cancelled&) {
    stream.end_cancelled();
  } catch (const Error& e) {
    stream.fail(e);
  } catch (const std::exception& e) {
    stream.fail(Error(ErrorKind::kInternal, std::string("generation failed: ") + e.what()));
  }
}

}  // namespace graphrt_serve
