// One text request's output on its way from a text engine's thread to the front end's: pieces
// of text as the library releases them, then the whole result (tokens, logprobs, usage), or an
// error, or (once cancelled) a cancelled end. The front end waits for them or cancels (its
// client went away), which the engine sees at the next piece.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "graphrt/error.h"
#include "graphrt/text_generation.h"

namespace graphrt_serve {

struct TextEvent {
  enum Kind { kPiece, kDone, kCancelled, kFailed } kind = kPiece;
  std::string piece;                                  // kPiece
  graphrt::GenerationResult result;                   // kDone
  std::map<int32_t, std::string> token_text;          // kDone: the text of each token in result.sampled
  graphrt::ErrorKind error_kind = graphrt::ErrorKind::kInternal;  // kFailed
  std::string error, field;                           // kFailed: what() and the "field" context
};

class TextStream {
 public:
  // The engine's side.
  void push_piece(std::string piece);
  void finish(graphrt::GenerationResult result, std::map<int32_t, std::string> token_text);
  void fail(const graphrt::Error& error);
  void end_cancelled();
  bool cancelled() const;

  // The front end's side: the next event, waiting for it. Nothing follows kDone, kCancelled or kFailed.
  TextEvent next();
  // The same without waiting: false when no event is there yet.
  bool try_next(TextEvent* event);
  // `listener` is called after each event is queued (on the engine's thread, under the stream's
  // lock: it must be short and must not call into this stream), so that a front end that does
  // not wait in next() learns when try_next() has more; null: none. Once this returns, no call
  // of the previous listener is running.
  void set_listener(std::function<void()> listener);
  // Stops the request at its next piece; idempotent, safe from any thread.
  void cancel();

 private:
  void push(TextEvent event);
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TextEvent> events_;
  std::function<void()> listener_;
  bool cancelled_ = false;
};

}  // namespace graphrt_serve
