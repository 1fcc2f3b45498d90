#include "generation/token_stream.h"

namespace graphrt_serve {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kLength: return "length";
    case FinishReason::kStop: return "stop";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kNone: break;
  }
  return "";
}

void TokenStream::set_cancel_callback(std::function<void()> on_cancel) {
  std::lock_guard<std::mutex> lock(mutex_);
  on_cancel_ = std::move(on_cancel);
}

void TokenStream::push(TokenEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
    if (listener_) listener_();
  }
  ready_.notify_one();
}

void TokenStream::push_token(int32_t token, FinishReason reason) {
  TokenEvent e;
  e.token = token;
  e.reason = reason;
  push(std::move(e));
}

void TokenStream::end_cancelled() {
  TokenEvent e;
  e.kind = TokenEvent::kCancelled;
  e.reason = FinishReason::kCancelled;
  push(std::move(e));
}

void TokenStream::fail(const graphrt::Error& error) {
  TokenEvent e;
  e.kind = TokenEvent::kFailed;
  e.error_kind = error.kind();
  e.error = error.what();
  push(std::move(e));
}

bool TokenStream::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

TokenEvent TokenStream::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return !events_.empty(); });
  TokenEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

void TokenStream::cancel() {
  std::function<void()> wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancelled_) return;
    cancelled_ = true;
    wake = on_cancel_;
  }
  if (wake) wake();
}

bool TokenStream::try_next(TokenEvent* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (events_.empty()) return false;
  *event = std::move(events_.front());
  events_.pop_front();
  return true;
}

void TokenStream::set_listener(std::function<void()> listener) {
  std::lock_guard<std::mutex> lock(mutex_);
  listener_ = std::move(listener);
}

}  // namespace graphrt_serve
