// A connection that answers with an event stream, once its handler has returned: the source of
// its events, the bytes on their way to the socket (bounded), and the HTTP framing. Driven by
// the connection reactor's thread alone (never waits: the source is polled, the socket written
// without blocking); the reactor calls pump() when the source says it has more, flush() when
// the socket takes more, and closes the connection when it is broken or stalled.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "http/connection_reactor.h"
#include "http/event_stream.h"

namespace graphrt_serve {

class StreamConnection {
 public:
  // At most this much of a stream waits for its socket; the source is not polled meanwhile, so a
  // client that does not read holds this, the socket's send buffer and the events its engine has
  // made, no more. An event is about 100 bytes: this is eighty of them.
  static constexpr size_t kMaxBufferedBytes = 8 * 1024;
  // The socket's send buffer once it streams (the kernel doubles it). Left to itself, Linux grows
  // a loopback socket's to 4 MB (tcp_wmem), which a client that never reads would hold.
  static constexpr int kSocketSendBytes = 8 * 1024;

  enum class State { kRunning, kDone, kBroken };

  // `http10`: the client speaks HTTP/1.0 (no chunked encoding: the body ends with the connection);
  // `keep_alive`: the connection may serve another request after the stream.
  StreamConnection(std::unique_ptr<Connection> connection, std::unique_ptr<EventSource> source, bool http10,
                   bool keep_alive);
  // Stops the source's notifications, then destroys it (cancelling its request if it runs), then the connection.
  ~StreamConnection();
  StreamConnection(const StreamConnection&) = delete;
  StreamConnection& operator=(const StreamConnection&) = delete;

  int fd() const { return connection_->fd; }
  EventSource& source() { return *source_; }
  State state() const { return state_; }
  bool keep_alive() const { return keep_alive_; }
  // Bytes wait for the socket (the reactor then watches it for writing).
  bool wants_write() const { return sent_ < out_.size(); }
  // Bytes have waited for the socket this long without it taking any.
  bool stalled(std::chrono::steady_clock::time_point now, int timeout_ms) const;

  // Takes what the source has now (while the buffer has room) and writes what the socket takes.
  void pump(std::chrono::steady_clock::time_point now);
  // Writes what waits, as far as the socket takes it.
  void flush(std::chrono::steady_clock::time_point now);
  // Ends the stream now with the source's cut events (or, before its head, a 503).
  void cut(const std::string& why, std::chrono::steady_clock::time_point now);
  // After kDone: the connection, for its next request (the source is destroyed first).
  std::unique_ptr<Connection> release_connection();

  uint32_t epoll_events = 0;  // what the reactor watches the socket for (its to keep)

 private:
  void take(EventPoll poll);
  void append_events(const std::string& text, bool last);

  std::unique_ptr<Connection> connection_;
  std::unique_ptr<EventSource> source_;
  bool http10_, keep_alive_;
  bool head_written_ = false, last_taken_ = false;
  State state_ = State::kRunning;
  std::string out_;
  size_t sent_ = 0;
  std::chrono::steady_clock::time_point waiting_since_;  // when the socket last took bytes, or bytes began to wait
};

}  // namespace graphrt_serve
