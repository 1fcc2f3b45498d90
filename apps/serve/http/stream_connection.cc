#include "http/stream_connection.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdio>

#include "protocol/infer_response.h"

namespace graphrt_serve {

using Clock = std::chrono::steady_clock;

namespace {

const char* reason_phrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return status < 500 ? "Bad Request" : "Internal Server Error";
  }
}

std::string connection_header(bool keep_alive) { return keep_alive ? "" : "Connection: close\r\n"; }

std::string stream_head(bool http10, bool keep_alive) {
  return std::string("HTTP/1.1 200 OK\r\nContent-Type: ") + kEventStreamType +
         "\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\n" +  // proxies (nginx) pass each event on at once
         (http10 ? "" : "Transfer-Encoding: chunked\r\n") + connection_header(keep_alive) + "\r\n";
}

std::string refusal(int status, const std::string& json, bool keep_alive) {
  return "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(json.size()) + "\r\n" +
         connection_header(keep_alive) + "\r\n" + json;
}

}  // namespace

StreamConnection::StreamConnection(std::unique_ptr<Connection> connection, std::unique_ptr<EventSource> source,
                                   bool http10, bool keep_alive)
    : connection_(std::move(connection)),
      source_(std::move(source)),
      http10_(http10),
      keep_alive_(keep_alive && !http10) {
  (void)setsockopt(connection_->fd, SOL_SOCKET, SO_SNDBUF, &kSocketSendBytes, sizeof kSocketSendBytes);
}

StreamConnection::~StreamConnection() {
  if (source_) source_->set_ready_listener(nullptr);
  source_.reset();
  connection_.reset();
}

bool StreamConnection::stalled(Clock::time_point now, int timeout_ms) const {
  return wants_write() &&
         std::chrono::duration_cast<std::chrono::milliseconds>(now - waiting_since_).count() >= timeout_ms;
}

void StreamConnection::append_events(const std::string& text, bool last) {
  if (!head_written_) {
    out_ += stream_head(http10_, keep_alive_);
    head_written_ = true;
  }
  if (!text.empty()) {
    if (http10_) {
      out_ += text;
    } else {
      char size[24];
      std::snprintf(size, sizeof size, "%zx\r\n", text.size());
      out_ += size;
      out_ += text;
      out_ += "\r\n";
    }
  }
  if (last) {
    if (!http10_) out_ += "0\r\n\r\n";
    last_taken_ = true;
  }
}

void StreamConnection::take(EventPoll poll) {
  switch (poll.kind) {
    case EventPoll::kPending: break;
    case EventPoll::kEvents: append_events(poll.text, poll.last); break;
    case EventPoll::kRefused:
      if (head_written_) {  // a source's mistake; the stream cannot become an error response now
        state_ = State::kBroken;
        break;
      }
      out_ += refusal(poll.status, poll.text, keep_alive_);
      head_written_ = last_taken_ = true;
      break;
    case EventPoll::kGone: state_ = State::kBroken; break;
  }
}

void StreamConnection::pump(Clock::time_point now) {
  for (;;) {
    bool full = false;
    while (state_ == State::kRunning && !last_taken_) {
      if (out_.size() - sent_ >= kMaxBufferedBytes) {
        full = true;
        break;
      }
      EventPoll p = source_->poll();
      if (p.kind == EventPoll::kPending) break;
      take(std::move(p));
    }
    flush(now);
    if (!full || wants_write()) return;  // the buffer was full and the socket took it all: poll on
  }
}

void StreamConnection::flush(Clock::time_point now) {
  const bool was_waiting = wants_write();
  while (state_ == State::kRunning && wants_write()) {
    const ssize_t n = ::send(connection_->fd, out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent_ += static_cast<size_t>(n);
      waiting_since_ = now;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    state_ = State::kBroken;  // the client went away
  }
  if (!was_waiting && wants_write()) waiting_since_ = now;
  if (!wants_write()) {
    out_.clear();
    sent_ = 0;
  } else if (sent_ > kMaxBufferedBytes) {
    out_.erase(0, sent_);
    sent_ = 0;
  }
  if (state_ == State::kRunning && last_taken_ && !wants_write()) state_ = State::kDone;
}

void StreamConnection::cut(const std::string& why, Clock::time_point now) {
  if (state_ != State::kRunning || last_taken_) return;
  pump(now);  // what the source has made goes out first
  if (state_ != State::kRunning || last_taken_) return;
  keep_alive_ = false;
  if (!head_written_) {
    take(EventPoll{EventPoll::kRefused, error_json(why), true, 503});
  } else {
    EventPoll p;
    p.kind = EventPoll::kEvents;
    p.text = source_->cut_events(why);
    p.last = true;
    take(std::move(p));
  }
  flush(now);
}

std::unique_ptr<Connection> StreamConnection::release_connection() {
  source_->set_ready_listener(nullptr);
  source_.reset();
  return std::move(connection_);
}

}  // namespace graphrt_serve
