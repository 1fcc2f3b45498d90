#include "http/connection_reactor.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "graphrt/error.h"
#include "http/stream_connection.h"
#include "protocol/infer_response.h"
#include "status.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

// Set by a handler when the connection must close after its answer: the request's body was
// not read (too large, or in an encoding refused before the library would inflate it), so
// what follows on the connection is not a request. Connections are served on one thread.
thread_local bool close_after_response_flag = false;

// The connection whose request this worker thread is handling (set around each request):
// a handler that runs for long (a generate request) asks the reactor to watch it for the
// client going away.
thread_local Connection* current_connection = nullptr;

// An event stream the handler on this thread answers with (start_event_stream): once the
// library has finished with the request, the connection and the stream go to the reactor,
// which writes the stream; what the library writes meanwhile (its own empty answer) is dropped.
struct PendingStream {
  std::unique_ptr<EventSource> source;
  bool http10 = false, keep_alive = false;
};
thread_local std::unique_ptr<PendingStream> pending_stream;

// Health checks are answered while the server drains (readiness says it is going).
bool is_health_check(const std::string& request) { return request.compare(0, 15, "GET /v2/health/") == 0; }

void epoll_set(int epoll, int fd, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT) epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev);
}

enum class Scan { kIncomplete, kComplete, kHeadTooLarge };

bool ieq(const char* a, size_t n, const char* b) {
  if (std::strlen(b) != n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

// Frames the request at the front of c.in: its head (bounded) and the length of its body.
// A request without Content-Length or Transfer-Encoding has no body (RFC 9112 6.3), and the
// head gets "Content-Length: 0" for the library, which would otherwise read until the client
// closes. Framing the library refuses (chunked, a bad or too large Content-Length) is complete
// at the head's end: the library answers it and the connection closes.
Scan scan_request(Connection& c, const ConnectionLimits& limits) {
  if (c.head_end == 0) {
    size_t blank = 0;  // empty lines before a request line are ignored (RFC 9112 2.2)
    while (blank < c.in.size() && (c.in[blank] == '\r' || c.in[blank] == '\n')) ++blank;
    if (blank) c.in.erase(0, blank);
    if (c.in.empty()) return Scan::kIncomplete;
    size_t end = c.in.find("\r\n\r\n"), terminator = 4;
    const size_t lf = c.in.find("\n\n");
    if (lf != std::string::npos && (end == std::string::npos || lf < end)) end = lf, terminator = 2;
    if (end == std::string::npos)
      return c.in.size() > limits.max_header_bytes ? Scan::kHeadTooLarge : Scan::kIncomplete;
    if (end + terminator > limits.max_header_bytes) return Scan::kHeadTooLarge;
    c.head_end = end + terminator;
    bool has_length = false, bad_length = false, chunked = false, expect_continue = false;
    size_t length = 0;
    for (size_t line = c.in.find('\n') + 1; line < end;) {
      size_t eol = c.in.find('\n', line);
      if (eol == std::string::npos || eol > end) eol = end;
      const size_t colon = c.in.find(':', line);
      if (colon != std::string::npos && colon < eol) {
        size_t v = colon + 1, ve = eol;
        while (v < ve && (c.in[v] == ' ' || c.in[v] == '\t')) ++v;
        while (ve > v && (c.in[ve - 1] == '\r' || c.in[ve - 1] == ' ' || c.in[ve - 1] == '\t')) --ve;
        const char* name = c.in.data() + line;
        const size_t name_len = colon - line;
        if (ieq(name, name_len, "content-length")) {
          bad_length |= has_length || v == ve || ve - v > 18;
          has_length = true;
          for (size_t i = v; i < ve && !bad_length; ++i) {
            if (c.in[i] < '0' || c.in[i] > '9') bad_length = true;
            else length = length * 10 + static_cast<size_t>(c.in[i] - '0');
          }
        } else if (ieq(name, name_len, "transfer-encoding")) {
          chunked = true;
        } else if (ieq(name, name_len, "content-type") && ve - v >= 33 &&
                   ieq(c.in.data() + v, 33, "application/x-www-form-urlencoded")) {
          // What `curl -d` and Python's urllib send with any body. The protocol's bodies are JSON
          // (or JSON + binary) whatever the client calls them, and the library would parse this
          // one as a form, refusing one over 8 KiB with 413: it does not see the header.
          c.in[line] = 'X';
        } else if (ieq(name, name_len, "expect") && ieq(c.in.data() + v, ve - v, "100-continue")) {
          // Answered here (the body is read here); the library, which would send its own 100
          // after the body came, does not see the header.
          expect_continue = true;
          c.in[line] = 'X';
        }
      }
      line = eol + 1;
    }
    if (!has_length && !chunked) {
      const std::string line_end = terminator == 4 ? "\r\n" : "\n";
      c.in.insert(end + line_end.size(), "Content-Length: 0" + line_end);
      c.head_end += 17 + line_end.size();
    }
    c.need = c.head_end;
    if (has_length && !bad_length && !chunked && length <= limits.max_body_bytes) c.need += length;
    if (expect_continue && c.need > c.head_end && c.in.size() < c.need) {
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      if (!c.continue_sent) (void)::send(c.fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      c.continue_sent = true;
    }
  }
  return c.in.size() >= c.need ? Scan::kComplete : Scan::kIncomplete;
}

// An answer the connection layer gives itself (431, 408, 503), then the connection closes.
// Best effort: the socket's buffer takes it whole or the client gets a reset.
void send_and_close(std::unique_ptr<Connection> c, int status, const char* reason, const std::string& message) {
  const std::string body = error_json(message);
  const std::string response = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                               "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(c->fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// The stream a worker gives the library: reads come from the request already buffered (never
// from the socket: the request is whole), writes go to the socket within the write timeout.
class BufferedStream : public httplib::Stream {
 public:
  BufferedStream(Connection* c, int write_timeout_ms) : c_(c), write_timeout_ms_(write_timeout_ms) {}

  bool is_readable() const override { return pos_ < c_->in.size(); }
  bool is_writable() const override { return wait(POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ >= c_->in.size()) return -1;
    const size_t n = std::min(size, c_->in.size() - pos_);
    std::memcpy(ptr, c_->in.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (pending_stream) return static_cast<ssize_t>(size);
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(write_timeout_ms_);
    for (;;) {
      const ssize_t n = ::send(c_->fd, ptr, size, MSG_NOSIGNAL);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0 || !wait(POLLOUT, static_cast<int>(left))) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(false, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(true, ip, port); }
  socket_t socket() const override { return c_->fd; }
  size_t consumed() const { return pos_; }

 private:
  bool wait(short events, int timeout_ms) const {
    pollfd p{c_->fd, events, 0};
    int r;
    do {
      r = ::poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    return r > 0 && (p.revents & (events | POLLHUP | POLLERR));
  }

  void address(bool local, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    auto* a = reinterpret_cast<sockaddr*>(&addr);
    ip.clear();
    port = 0;
    if ((local ? getsockname(c_->fd, a, &len) : getpeername(c_->fd, a, &len)) != 0) return;
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getnameinfo(a, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host;
      port = std::atoi(serv);
    }
  }

  Connection* c_;
  int write_timeout_ms_;
  size_t pos_ = 0;
};

// The library's accept loop hands each accepted socket to its task queue; this one runs the
// task at once on the accepting thread, where PipelinedServer passes the socket to its reactor.
class InlineTaskQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

}  // namespace

Connection::~Connection() {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

void close_after_response() { close_after_response_flag = true; }

void answer_with_stream(std::unique_ptr<EventSource> source, bool http10, bool keep_alive) {
  if (!current_connection)
    throw Error(ErrorKind::kInternal, "an event stream started outside a request of the connection layer");
  pending_stream = std::make_unique<PendingStream>();
  pending_stream->source = std::move(source);
  pending_stream->http10 = http10;
  pending_stream->keep_alive = keep_alive;
}

PipelinedServer::PipelinedServer() {
  new_task_queue = [] { return new InlineTaskQueue; };
  // Exclusive ports: the library's default sets SO_REUSEPORT, with which a second server on
  // the same port binds too and the kernel splits the connections between the two.
  set_socket_options([](socket_t sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
}

PipelinedServer::~PipelinedServer() { finish(); }

void PipelinedServer::start() {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
  reactor_ = std::thread([this] { reactor_loop(); });
  for (int i = 0; i < workers; ++i) worker_threads_.emplace_back([this] { worker_loop(); });
}

void PipelinedServer::finish() {
  if (reactor_.joinable()) {
    wake();
    reactor_.join();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    workers_done_ = true;
    for (IdleWorker* w : idle_) w->wake.notify_one();
    idle_.clear();
  }
  for (std::thread& t : worker_threads_) t.join();
  worker_threads_.clear();
  if (epoll_ >= 0) ::close(epoll_);
  if (wake_ >= 0) ::close(wake_);
  epoll_ = wake_ = -1;
}

void PipelinedServer::wake() {
  const uint64_t one = 1;
  (void)!::write(wake_, &one, sizeof one);
}

bool PipelinedServer::process_and_close_socket(socket_t sock) {
  auto c = std::make_unique<Connection>(sock);
  const int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
  c->last_activity = Clock::now();
  if (open_.fetch_add(1) >= limits.max_connections) {
    open_.fetch_sub(1);
    send_and_close(std::move(c), 503, "Service Unavailable",
                   "too many open connections (" + std::to_string(limits.max_connections) + ")");
    return false;
  }
  hand_to_reactor(std::move(c));
  return true;
}

void PipelinedServer::hand_to_reactor(std::unique_ptr<Connection> c) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    to_reactor_.push_back(std::move(c));
  }
  wake();
}

void PipelinedServer::close_connection(std::unique_ptr<Connection> c) {
  c.reset();
  open_.fetch_sub(1);
}

void PipelinedServer::reactor_loop() {
  std::vector<epoll_event> events(64);
  Clock::time_point stop_seen{}, last_sweep{};
  for (;;) {
    const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 50);
    const Clock::time_point now = Clock::now();
    const bool stop = stopping();
    if (stop && stop_seen == Clock::time_point{}) stop_seen = now;
    std::vector<std::unique_ptr<Connection>> incoming;
    std::vector<std::unique_ptr<StreamConnection>> incoming_streams;
    std::vector<int> ready;
    std::string cut_why;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      incoming.swap(to_reactor_);
      incoming_streams.swap(streams_to_reactor_);
      ready.swap(ready_streams_);
      if (cut_) cut_why = cut_why_;
    }
    for (auto& c : incoming) watch_for_requests(std::move(c));
    for (auto& s : incoming_streams) {
      const int fd = s->fd();
      epoll_set(epoll_, fd, EPOLLRDHUP);  // the close watch of its handler may hold the fd's registration
      s->epoll_events = EPOLLRDHUP;
      s->source().set_ready_listener([this, fd] { stream_ready(fd); });
      streams_[fd] = std::move(s);
      ready.push_back(fd);
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_) {
        uint64_t v;
        (void)!::read(wake_, &v, sizeof v);
        continue;
      }
      auto s = streams_.find(fd);
      if (s != streams_.end()) {
        if (events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) end_stream(s, true);
        else ready.push_back(fd);  // the socket takes more
        continue;
      }
      auto it = conns_.find(fd);
      if (it == conns_.end()) {
        fire_watch(fd);
        continue;
      }
      read_requests(it, now, stop ? stop_seen : Clock::time_point::max());
    }
    for (int fd : ready) {
      auto s = streams_.find(fd);
      if (s == streams_.end()) continue;  // ended since
      if (cut_why.empty()) s->second->pump(now);
      settle_stream(s, stop);
    }
    if (!cut_why.empty())
      for (auto s = streams_.begin(); s != streams_.end();) {
        s->second->cut(cut_why, now);
        s = settle_stream(s, stop);
      }
    if (now - last_sweep >= std::chrono::milliseconds(10) || stop) {
      last_sweep = now;
      expire(now, stop, stop_seen);
    }
    // Draining: once nothing is in flight (no request at a worker or being received, no
    // stream), the listener closes.
    if (draining_ && svr_sock_ != INVALID_SOCKET && streams_.empty() && open_.load() == conns_.size() &&
        std::none_of(conns_.begin(), conns_.end(), [](const auto& c) { return c.second->in_request; }))
      httplib::Server::stop();
    if (svr_sock_ == INVALID_SOCKET && conns_.empty() && streams_.empty() && open_.load() == 0) return;
  }
}

void PipelinedServer::watch_for_requests(std::unique_ptr<Connection> c) {
  epoll_set(epoll_, c->fd, EPOLLIN | EPOLLRDHUP);
  const int fd = c->fd;
  conns_[fd] = std::move(c);
}

// Reads what the client sent; a request received whole goes to a worker (or, when its first
// byte came after the server began to stop, is refused).
void PipelinedServer::read_requests(ConnectionMap::iterator it, Clock::time_point now, Clock::time_point refuse_after) {
  Connection& c = *it->second;
  const int fd = c.fd;
  char chunk[65536];
  bool eof = false;
  for (size_t got = 0; got < sizeof chunk;) {  // at most one chunk per turn: fairness
    const ssize_t r = ::recv(fd, chunk, sizeof chunk, 0);
    if (r > 0) {
      if (!c.in_request) c.in_request = true, c.request_start = now;
      c.in.append(chunk, static_cast<size_t>(r));
      c.last_activity = now;
      got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) eof = true;
    if (r < 0 && errno == EINTR) continue;
    break;
  }
  const Scan scan = c.in.empty() ? Scan::kIncomplete : scan_request(c, limits);
  if (scan == Scan::kComplete && c.request_start >= refuse_after && !is_health_check(c.in)) {
    epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    send_and_close(std::move(it->second), 503, "Service Unavailable",
                   "the server is stopping: new requests are refused");
    conns_.erase(it);
    open_.fetch_sub(1);
  } else if (scan == Scan::kComplete) {
    epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    dispatch(std::move(it->second));
    conns_.erase(it);
  } else if (scan == Scan::kHeadTooLarge) {
    epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    send_and_close(std::move(it->second), 431, "Request Header Fields Too Large",
                   "request line and headers larger than " + std::to_string(limits.max_header_bytes) + " bytes");
    conns_.erase(it);
    open_.fetch_sub(1);
  } else if (eof) {
    epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    conns_.erase(it);
    open_.fetch_sub(1);
  }
}

// After a stream was pumped or cut: a finished one closes or serves the connection's next
// request, a broken one closes; a running one is watched for writing while bytes wait.
PipelinedServer::StreamMap::iterator PipelinedServer::settle_stream(StreamMap::iterator s, bool stop) {
  StreamConnection& stream = *s->second;
  if (stream.state() == StreamConnection::State::kBroken) return end_stream(s, true);
  if (stream.state() == StreamConnection::State::kDone) return end_stream(s, stop || !stream.keep_alive());
  const uint32_t events = EPOLLRDHUP | (stream.wants_write() ? uint32_t{EPOLLOUT} : 0u);
  if (events != stream.epoll_events) epoll_set(epoll_, stream.fd(), events);
  stream.epoll_events = events;
  return std::next(s);
}

PipelinedServer::StreamMap::iterator PipelinedServer::end_stream(StreamMap::iterator s, bool close) {
  std::unique_ptr<StreamConnection> stream = std::move(s->second);
  auto next = streams_.erase(s);
  if (close) {
    epoll_ctl(epoll_, EPOLL_CTL_DEL, stream->fd(), nullptr);
    stream.reset();  // cancels the request if it still runs
    open_.fetch_sub(1);
  } else {
    std::unique_ptr<Connection> c = stream->release_connection();
    stream.reset();
    c->last_activity = c->request_start = Clock::now();  // a request pipelined behind the stream starts now
    const Scan scan = c->in.empty() ? Scan::kIncomplete : scan_request(*c, limits);
    if (scan == Scan::kComplete) {
      epoll_ctl(epoll_, EPOLL_CTL_DEL, c->fd, nullptr);
      dispatch(std::move(c));
    } else if (scan == Scan::kHeadTooLarge) {
      epoll_ctl(epoll_, EPOLL_CTL_DEL, c->fd, nullptr);
      send_and_close(std::move(c), 431, "Request Header Fields Too Large",
                     "request line and headers larger than " + std::to_string(limits.max_header_bytes) + " bytes");
      open_.fetch_sub(1);
    } else {
      watch_for_requests(std::move(c));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --streams_open_;
  }
  streams_gone_.notify_all();
  return next;
}

// Deadlines, and on stop: idle connections close now, partial requests get drain_ms; a stream
// whose client has taken nothing for the write timeout closes (its request cancelled).
void PipelinedServer::expire(Clock::time_point now, bool stop, Clock::time_point stop_seen) {
  const auto since = [&](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - t).count();
  };
  for (auto it = conns_.begin(); it != conns_.end();) {
    Connection& c = *it->second;
    const char* why = nullptr;
    if (!c.in_request) {
      // Draining, a connection that has not sent its first request yet may still send it (and
      // get 503 or its health check's answer); once the listener is closed, none may.
      const bool may_close = c.served > 0 || svr_sock_ == INVALID_SOCKET;
      if ((stop && may_close) || since(c.last_activity) >= limits.keep_alive_timeout_ms) why = "";
    } else if (since(c.request_start) >= limits.request_timeout_ms) {
      why = "the request was not received within the request timeout";
    } else if (since(c.last_activity) >= limits.read_timeout_ms) {
      why = "the client sent nothing for longer than the read timeout";
    } else if (stop && since(stop_seen) >= limits.drain_ms) {
      why = "the server is stopping";
    }
    if (!why) {
      ++it;
      continue;
    }
    epoll_ctl(epoll_, EPOLL_CTL_DEL, it->first, nullptr);
    if (*why) send_and_close(std::move(it->second), 408, "Request Timeout", why);
    it = conns_.erase(it);
    open_.fetch_sub(1);
  }
  for (auto s = streams_.begin(); s != streams_.end();)
    s = s->second->stalled(now, limits.write_timeout_ms) ? end_stream(s, true) : std::next(s);
}

void PipelinedServer::dispatch(std::unique_ptr<Connection> c) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.empty()) {
    ready_.push_back(std::move(c));
    return;
  }
  IdleWorker* w = idle_.back();
  idle_.pop_back();
  w->conn = std::move(c);
  w->wake.notify_one();  // under the lock: the worker cannot end while it is being woken
}

void PipelinedServer::worker_loop() {
  IdleWorker self;
  for (;;) {
    std::unique_ptr<Connection> c;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!ready_.empty()) {
        c = std::move(ready_.front());
        ready_.pop_front();
      } else if (workers_done_) {
        return;
      } else {
        idle_.push_back(&self);
        self.wake.wait(lock, [&] { return self.conn != nullptr || workers_done_; });
        if (!self.conn) return;  // finish() took this worker off the stack
        c = std::move(self.conn);
      }
    }
    serve_connection(std::move(c));
  }
}

// The request's framing decides where the next begins (a handler may leave a body unread).
void next_request(Connection& c, size_t consumed) {
  c.in.erase(0, std::min(c.in.size(), std::max(consumed, c.need)));
  c.head_end = c.need = 0;
  c.continue_sent = false;
  c.in_request = !c.in.empty();
  c.request_start = c.last_activity = Clock::now();
}

void PipelinedServer::hand_stream_to_reactor(std::unique_ptr<Connection> c, size_t consumed, bool last) {
  const std::unique_ptr<PendingStream> p = std::move(pending_stream);
  next_request(*c, consumed);
  auto s = std::make_unique<StreamConnection>(std::move(c), std::move(p->source), p->http10,
                                              p->keep_alive && !last && !close_after_response_flag);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_to_reactor_.push_back(std::move(s));
    ++streams_open_;
  }
  wake();
}

void PipelinedServer::stream_ready(int fd) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    was_empty = ready_streams_.empty();
    ready_streams_.push_back(fd);
  }
  if (was_empty) wake();
}

void PipelinedServer::drain() {
  draining_ = true;
  if (wake_ >= 0) wake();
}

void PipelinedServer::cut_streams(const std::string& why, int wait_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (streams_open_ == 0) return;
  cut_why_ = why;
  cut_ = true;
  wake();
  streams_gone_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return streams_open_ == 0; });
}

void PipelinedServer::serve_connection(std::unique_ptr<Connection> c) {
  for (;;) {
    BufferedStream stream(c.get(), limits.write_timeout_ms);
    bool closed = false;
    close_after_response_flag = false;
    const bool last = ++c->served >= max_requests_per_connection || stopping();
    current_connection = c.get();
    const bool ok = process_request(stream, last, closed, nullptr);
    current_connection = nullptr;
    if (pending_stream) return hand_stream_to_reactor(std::move(c), stream.consumed(), last);
    if (!ok || closed || close_after_response_flag || last) return close_connection(std::move(c));
    next_request(*c, stream.consumed());
    Scan scan = c->in.empty() ? Scan::kIncomplete : scan_request(*c, limits);
    if (scan == Scan::kIncomplete && linger_for_next(*c)) scan = scan_request(*c, limits);
    if (scan == Scan::kComplete) continue;
    if (scan == Scan::kHeadTooLarge) {
      send_and_close(std::move(c), 431, "Request Header Fields Too Large",
                     "request line and headers larger than " + std::to_string(limits.max_header_bytes) + " bytes");
      open_.fetch_sub(1);
      return;
    }
    return hand_to_reactor(std::move(c));
  }
}

bool PipelinedServer::linger_for_next(Connection& c) {
  static constexpr long kLingerNs = 1000 * 1000;
  if (stopping()) return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ready_.empty()) return false;
  }
  pollfd p{c.fd, POLLIN, 0};
  timespec linger{0, kLingerNs};
  if (::ppoll(&p, 1, &linger, nullptr) != 1 || !(p.revents & POLLIN)) return false;
  char chunk[16384];
  bool got = false;
  for (size_t taken = 0; taken < (size_t{1} << 20);) {  // the rest, if any, is the reactor's to read
    const ssize_t r = ::recv(c.fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (r <= 0) break;  // nothing more now, or an end the reactor sees too
    const Clock::time_point now = Clock::now();
    if (!c.in_request) c.in_request = true, c.request_start = now;
    c.in.append(chunk, static_cast<size_t>(r));
    c.last_activity = now;
    taken += static_cast<size_t>(r);
    got = true;
  }
  return got;
}

void PipelinedServer::unwatch(int fd) {
  epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  std::lock_guard<std::mutex> lock(watch_mutex_);
  watches_.erase(fd);
}

void PipelinedServer::fire_watch(int fd) {
  std::function<void()> on_close;
  {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    auto it = watches_.find(fd);
    if (it == watches_.end()) return;  // a watch that ended while its event was on the way
    on_close = std::move(it->second);
    watches_.erase(it);
  }
  on_close();
}

std::unique_ptr<PipelinedServer::CloseWatch> PipelinedServer::watch_close(std::function<void()> on_close) {
  Connection* c = current_connection;
  if (!c) return nullptr;
  {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    watches_[c->fd] = std::move(on_close);
  }
  epoll_event ev{};
  ev.events = EPOLLRDHUP | EPOLLONESHOT;
  ev.data.fd = c->fd;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, c->fd, &ev);
  return std::make_unique<CloseWatch>(this, c->fd);
}

int bind_server(httplib::Server& server, const std::string& host, int port, const char* what) {
  if (port == 0) {
    const int bound = server.bind_to_any_port(host);
    if (bound <= 0) throw Error(ErrorKind::kResourceExhausted, std::string("cannot bind the ") + what + " port");
    return bound;
  }
  if (!server.bind_to_port(host, port))
    throw Error(ErrorKind::kResourceExhausted,
                std::string("cannot bind the ") + what + " port " + std::to_string(port) + " (in use?)")
        .with("host", host);
  return port;
}


}  // namespace graphrt_serve
