// One generate request's tokens on their way from the engine's thread to the
// front end's: the engine pushes tokens, the last one carrying why the request
// finished, or an error, or (once cancelled) a kCancelled end; the front end
// waits for them, or cancels (its client went away), which the engine sees
// before its next step.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "graphrt/error.h"

namespace graphrt_serve {

enum class FinishReason { kNone, kLength, kStop, kCancelled };

// "length", "stop", "cancelled" (the protocol's finish_reason); "" for kNone.
const char* finish_reason_name(FinishReason reason);

struct TokenEvent {
  enum Kind { kToken, kCancelled, kFailed } kind = kToken;
  int32_t token = 0;
  FinishReason reason = FinishReason::kNone;          // kToken: set on the last token
  graphrt::ErrorKind error_kind = graphrt::ErrorKind::kInternal;  // kFailed
  std::string error;                                   // kFailed: graphrt::Error::what()
};

class TokenStream {
 public:
  // `on_cancel` wakes the engine (it may be waiting with nothing to do).
  void set_cancel_callback(std::function<void()> on_cancel);

  // The engine's side.
  void push_token(int32_t token, FinishReason reason);
  void end_cancelled();
  void fail(const graphrt::Error& error);
  bool cancelled() const;

  // The front end's side: the next event, waiting for it. None follows a token with a reason, kCancelled or kFailed.
  TokenEvent next();
  // The same without waiting: false when no event is there yet.
  bool try_next(TokenEvent* event);
  // `listener` is called after each event is queued (on the engine's thread, under the stream's
  // lock: it must be short and must not call into this stream), so that a front end that does
  // not wait in next() learns when try_next() has more; null: none. Once this returns, no call
  // of the previous listener is running.
  void set_listener(std::function<void()> listener);
  // Stops the request (its sequence is removed); idempotent, safe from any thread.
  void cancel();

 private:
  void push(TokenEvent event);
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TokenEvent> events_;
  std::function<void()> listener_;
  std::function<void()> on_cancel_;
  bool cancelled_ = false;
};

}  // namespace graphrt_serve
