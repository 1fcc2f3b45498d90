#include "generation/text_stream.h"

#include <utility>

namespace graphrt_serve {

void TextStream::push(TextEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
    if (listener_) listener_();
  }
  ready_.notify_all();
}

void TextStream::push_piece(std::string piece) {
  TextEvent e;
  e.piece = std::move(piece);
  push(std::move(e));
}

void TextStream::finish(graphrt::GenerationResult result, std::map<int32_t, std::string> token_text) {
  TextEvent e;
  e.kind = TextEvent::kDone;
  e.result = std::move(result);
  e.token_text = std::move(token_text);
  push(std::move(e));
}

void TextStream::fail(const graphrt::Error& error) {
  TextEvent e;
  e.kind = TextEvent::kFailed;
  e.error_kind = error.kind();
  e.error = error.what();
  e.field = error.context_value("field");
  push(std::move(e));
}

void TextStream::end_cancelled() {
  TextEvent e;
  e.kind = TextEvent::kCancelled;
  push(std::move(e));
}

bool TextStream::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

void TextStream::cancel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
  }
  ready_.notify_all();
}

TextEvent TextStream::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return !events_.empty(); });
  TextEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

bool TextStream::try_next(TextEvent* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (events_.empty()) return false;
  *event = std::move(events_.front());
  events_.pop_front();
  return true;
}

void TextStream::set_listener(std::function<void()> listener) {
  std::lock_guard<std::mutex> lock(mutex_);
  listener_ = std::move(listener);
}

}  // namespace graphrt_serve
