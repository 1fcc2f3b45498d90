#include "http/http_frontend.h"

#include <httplib.h>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "generation/generate_request.h"
#include "generation/generate_response.h"
#include "generation/generator.h"
#include "graphrt/error.h"
#include "http/event_stream.h"
#include "http/openai_routes.h"
#include "http/text_generate_route.h"
#include "protocol/infer_request.h"
#include "protocol/infer_response.h"
#include "status.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

const char* kJson = "application/json";

void reply_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, kJson);
}

void reply_error(httplib::Response& res, const Error& e) { reply_json(res, http_status(e.kind()), error_json(e.what())); }

std::string match(const httplib::Request& req, size_t i) {
  return i < req.matches.size() ? std::string(req.matches[i]) : std::string();
}

std::string tensor_metadata_json(const std::vector<TensorMetadata>& tensors) {
  std::string out = "[";
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorMetadata& t = tensors[i];
    if (i) out += ",";
    // An unknown type or shape (Relax parameters without config.json) is reported as such.
    out += "{\"name\":" + json_string(t.name) + ",\"datatype\":\"" +
           (t.known_type ? datatype_name(t.datatype) : "") + "\",\"shape\":[";
    if (t.known_shape)
      for (size_t d = 0; d < t.shape.size(); ++d) out += (d ? "," : "") + std::to_string(t.shape[d]);
    else
      out += "-1";
    out += "]}";
  }
  return out + "]";
}

// Runs a handler body, turning graphrt errors (and anything else) into the protocol's
// {"error": ...} with the kind's status.
template <typename F>
void guarded(httplib::Response& res, F&& body) {
  try {
    body();
  } catch (const Error& e) {
    reply_error(res, e);
  } catch (const std::bad_alloc&) {
    reply_json(res, 429, error_json("out of memory handling the request"));
  } catch (const std::exception& e) {
    reply_json(res, 500, error_json(std::string("internal error: ") + e.what()));
  }
}

// Set by a handler when the connection must close after its answer: the request's body was
// not read (too large, or in an encoding refused before the library would inflate it), so
// what follows on the connection is not a request. Connections are served on one thread.
thread_local bool close_after_response = false;

// The connection whose request this worker thread is handling (set around each request):
// a handler that runs for long (a generate request) asks the reactor to watch it for the
// client going away.
struct Connection;
thread_local Connection* current_connection = nullptr;

// The connection layer. cpp-httplib serves a connection on one thread of its pool for as long
// as it is open, so a few clients that send slowly (or hold keep-alive connections idle) take
// every thread and a legitimate client waits. Here one reactor thread (epoll) holds every
// open connection and reads requests as their bytes come, within the limits below; only a
// request received whole (head and body) goes to a worker of the pool (--http-threads), which
// runs it through the library's parser and router over the buffered bytes and writes the
// answer. Workers never wait on a client's reads, so slow and idle clients cost a buffer and a
// descriptor each, not a thread (measured in docs/serving.md).
struct ConnectionLimits {
  size_t max_header_bytes = 64 * 1024;  // request line + headers; past it: 431
  size_t max_body_bytes = size_t(64) << 20;
  int read_timeout_ms = 10000;          // silence in the middle of a request: 408, closed
  int request_timeout_ms = 30000;       // a request's first byte to its last: 408, closed
  int keep_alive_timeout_ms = 5000;     // idle between requests: closed
  int write_timeout_ms = 10000;         // a client that does not read its answer
  size_t max_connections = 1000;        // open at once; one more gets 503 and is closed
  int drain_ms = 2000;                  // on stop, how long a request being received may take
};

struct Connection {
  explicit Connection(int fd_) : fd(fd_) {}
  ~Connection() {
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }
  int fd;
  std::string in;        // received bytes not yet served
  size_t head_end = 0;   // the current request's head length once complete, else 0
  size_t need = 0;       // the current request's whole length once its head is parsed
  bool continue_sent = false;
  bool in_request = false;  // bytes of a request received (else idle)
  size_t served = 0;
  Clock::time_point request_start, last_activity;
};

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

// The library's server with the connection layer above: keep-alive with pipelining, bounded
// heads, request and idle deadlines, idle connections closed promptly on stop, requests in
// flight answered (with Connection: close).
class PipelinedServer : public httplib::Server {
 public:
  ConnectionLimits limits;
  int workers = 4;
  size_t max_requests_per_connection = 1000000;

  PipelinedServer() {
    new_task_queue = [] { return new InlineTaskQueue; };
    // Exclusive ports: the library's default sets SO_REUSEPORT, with which a second server on
    // the same port binds too and the kernel splits the connections between the two.
    set_socket_options([](socket_t sock) {
      const int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
  }
  ~PipelinedServer() override { finish(); }

  // Before listen_after_bind(): starts the reactor and the workers.
  void start() {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
    reactor_ = std::thread([this] { reactor_loop(); });
    for (int i = 0; i < workers; ++i) worker_threads_.emplace_back([this] { worker_loop(); });
  }

  // While a handler runs: `on_close` is called once, on the reactor's thread, if the client of
  // the request being handled on this thread closes its connection (or resets it). The watch
  // ends when the returned guard is destroyed, before the connection serves anything else.
  class CloseWatch {
   public:
    CloseWatch(PipelinedServer* server, int fd) : server_(server), fd_(fd) {}
    CloseWatch(const CloseWatch&) = delete;
    CloseWatch& operator=(const CloseWatch&) = delete;
    ~CloseWatch() { server_->unwatch(fd_); }

   private:
    PipelinedServer* server_;
    int fd_;
  };
  std::unique_ptr<CloseWatch> watch_close(std::function<void()> on_close);

  // After listen_after_bind() returned (stop() was called): waits until every connection is
  // answered or closed, then ends the threads.
  void finish() {
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

 private:
  bool stopping() const { return svr_sock_ == INVALID_SOCKET; }

  void wake() {
    const uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
  }

  // On the accepting thread: the connection joins the reactor, or is refused when too many are open.
  bool process_and_close_socket(socket_t sock) override {
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

  void hand_to_reactor(std::unique_ptr<Connection> c) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      to_reactor_.push_back(std::move(c));
    }
    wake();
  }

  void close_connection(std::unique_ptr<Connection> c) {
    c.reset();
    open_.fetch_sub(1);
  }

  void reactor_loop() {
    std::map<int, std::unique_ptr<Connection>> conns;
    std::vector<epoll_event> events(64);
    Clock::time_point stop_seen{};
    char chunk[65536];
    for (;;) {
      const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 50);
      const Clock::time_point now = Clock::now();
      std::vector<std::unique_ptr<Connection>> incoming;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        incoming.swap(to_reactor_);
      }
      for (auto& c : incoming) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.fd = c->fd;
        epoll_ctl(epoll_, EPOLL_CTL_ADD, c->fd, &ev);
        const int fd = c->fd;
        conns[fd] = std::move(c);
      }
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_) {
          uint64_t v;
          (void)!::read(wake_, &v, sizeof v);
          continue;
        }
        auto it = conns.find(fd);
        if (it == conns.end()) {
          fire_watch(fd);
          continue;
        }
        Connection& c = *it->second;
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
        if (scan == Scan::kComplete) {
          epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
          dispatch(std::move(it->second));
          conns.erase(it);
        } else if (scan == Scan::kHeadTooLarge) {
          epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
          send_and_close(std::move(it->second), 431, "Request Header Fields Too Large",
                         "request line and headers larger than " + std::to_string(limits.max_header_bytes) +
                             " bytes");
          conns.erase(it);
          open_.fetch_sub(1);
        } else if (eof) {
          epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
          conns.erase(it);
          open_.fetch_sub(1);
        }
      }
      // Deadlines, and on stop: idle connections close now, partial requests get drain_ms.
      const bool stop = stopping();
      if (stop && stop_seen == Clock::time_point{}) stop_seen = now;
      for (auto it = conns.begin(); it != conns.end();) {
        Connection& c = *it->second;
        const auto since = [&](Clock::time_point t) {
          return std::chrono::duration_cast<std::chrono::milliseconds>(now - t).count();
        };
        const char* why = nullptr;
        if (!c.in_request) {
          if (stop || since(c.last_activity) >= limits.keep_alive_timeout_ms) why = "";
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
        it = conns.erase(it);
        open_.fetch_sub(1);
      }
      if (stop && conns.empty() && open_.load() == 0) return;
    }
  }

  // The worker that went idle last takes the request (a stack, not a queue): a light load
  // keeps running on the same few threads, so the per-thread state a request leaves behind
  // (malloc arenas, kernels' workspace pools, warm caches) exists for those few, not for every
  // --http-threads worker in turn.
  void dispatch(std::unique_ptr<Connection> c) {
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

  void worker_loop() {
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

  // Answers the whole request at the front of c->in, then any pipelined one behind it; hands
  // the connection back to the reactor or closes it.
  void serve_connection(std::unique_ptr<Connection> c) {
    for (;;) {
      BufferedStream stream(c.get(), limits.write_timeout_ms);
      bool closed = false;
      close_after_response = false;
      const bool last = ++c->served >= max_requests_per_connection || stopping();
      current_connection = c.get();
      const bool ok = process_request(stream, last, closed, nullptr);
      current_connection = nullptr;
      if (!ok || closed || close_after_response || last) return close_connection(std::move(c));
      // The request's framing decides where the next begins (a handler may leave a body unread).
      c->in.erase(0, std::min(c->in.size(), std::max(stream.consumed(), c->need)));
      c->head_end = c->need = 0;
      c->continue_sent = false;
      c->in_request = !c->in.empty();
      c->request_start = c->last_activity = Clock::now();
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

  // A client on a keep-alive connection often sends its next request as soon as it has read
  // the answer: waiting a moment for it here saves the round trip through the reactor (two
  // epoll changes and two thread wake-ups, most of a small request's time). Only while no
  // request waits for a worker and the server is not stopping, for at most 1 ms, and only
  // bytes already sent are read: a slow client holds a worker for the linger, no longer (what
  // it has not sent whole, the reactor goes on reading). True when bytes came.
  bool linger_for_next(Connection& c) {
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

  // A connection being handled is out of the epoll set; a watch puts it back for its close
  // alone (EPOLLRDHUP, one shot: no event for pipelined bytes, none repeated).
  void unwatch(int fd) {
    epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    std::lock_guard<std::mutex> lock(watch_mutex_);
    watches_.erase(fd);
  }

  void fire_watch(int fd) {
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

  std::mutex watch_mutex_;
  std::map<int, std::function<void()>> watches_;
  int epoll_ = -1, wake_ = -1;
  std::thread reactor_;
  std::vector<std::thread> worker_threads_;
  struct IdleWorker {
    std::condition_variable wake;
    std::unique_ptr<Connection> conn;  // handed over by dispatch()
  };
  std::mutex mutex_;  // guards to_reactor_, ready_, idle_, IdleWorker::conn, workers_done_
  std::vector<IdleWorker*> idle_;  // waiting workers, the last one to go idle at the back
  std::vector<std::unique_ptr<Connection>> to_reactor_;
  std::deque<std::unique_ptr<Connection>> ready_;
  bool workers_done_ = false;
  std::atomic<size_t> open_{0};
};

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

}  // namespace

// A generate_stream response in flight: the request's tokens, the watch that cancels them when
// the client goes away, and the model they come from. Owned by the response's content provider,
// which writes one event per token after the handler returned; when the response ends (done,
// the client gone, the server stopping) the request is cancelled, a no-op once it finished.
struct GenerateStreamState {
  std::shared_ptr<ServedModel> model;
  GenerateRequest request;
  std::shared_ptr<TokenStream> tokens;
  std::unique_ptr<PipelinedServer::CloseWatch> watch;
  ~GenerateStreamState() {
    watch.reset();
    if (tokens) tokens->cancel();
  }

  // The next event as SSE text; `last` is set when no event follows.
  std::string next_event(bool* last) {
    const TokenEvent e = tokens->next();
    *last = e.kind != TokenEvent::kToken || e.reason != FinishReason::kNone;
    if (e.kind == TokenEvent::kFailed) return sse_event(error_json(e.error));
    if (e.kind == TokenEvent::kCancelled) return std::string();
    return sse_event(generate_response_json({model->name(), model->version(), {e.token}, e.reason}, request));
  }
};

Generator& generator_of(const ServedModel& model) {
  if (!model.generator())
    throw Error(ErrorKind::kUnsupported, "'" + model.name() + "' is not a language model on a KV cache: generate "
                                         "serves Relax executables with MLC's create_tir_paged_kv_cache, prefill and "
                                         "decode functions, or those config.json's \"generation\" names")
        .with("field", "generation");
  return *model.generator();
}

struct HttpFrontend::Impl {
  Repository* repository = nullptr;
  ServerInfo info;
  HttpOptions options;
  PipelinedServer server;

  void infer(const httplib::Request& req, httplib::Response& res) {
    const Clock::time_point start = Clock::now();
    std::shared_ptr<ServedModel> model;
    try {
      model = repository->find(match(req, 1), match(req, 2));
    } catch (const Error& e) {
      reply_error(res, e);
      return;
    }
    ModelMetrics& metrics = model->metrics();
    InferTimings timings;
    bool ok = false;
    guarded(res, [&] {
      try {
        const std::string* header = nullptr;
        std::string header_value;
        if (req.has_header("Inference-Header-Content-Length")) {
          header_value = req.get_header_value("Inference-Header-Content-Length");
          header = &header_value;
        }
        const InferRequest request = decode_rest_request(req.body.data(), req.body.size(), header);
        InferResult result = model->infer(request, &timings);  // holds the instance until encoded
        InferResponse response;
        response.outputs = std::move(result.outputs);
        response.model_name = model->name();
        response.model_version = model->version();
        response.has_id = request.has_id;
        response.id = request.id;
        size_t json_size = 0;
        std::string body = encode_rest_response(response, request, &json_size);
        res.status = 200;
        if (json_size != body.size()) {
          res.set_header("Inference-Header-Content-Length", std::to_string(json_size));
          res.set_content(std::move(body), "application/octet-stream");
        } else {
          res.set_content(std::move(body), kJson);
        }
        ok = true;
      } catch (Error& e) {
        throw e.with("model", model->name());
      }
    });
    record_request(metrics, ok, timings, ns_since(start));
  }

  // POST .../generate and .../generate_stream: the request goes to the model's generator
  // (generation/); this only decodes, waits for tokens and writes them.
  void generate(const httplib::Request& req, httplib::Response& res, bool stream) {
    guarded(res, [&] {
      const auto model = repository->find(match(req, 1), match(req, 2));
      try {
        if (model->text_engine()) return text_generate(req, res, model, stream, watch_factory());
        Generator& generator = generator_of(*model);
        auto state = std::make_shared<GenerateStreamState>();
        state->model = model;
        state->request = decode_generate_request(req.body);
        state->tokens = generator.submit(state->request);
        std::shared_ptr<TokenStream> tokens = state->tokens;
        state->watch = server.watch_close([tokens] { tokens->cancel(); });
        if (stream) return start_stream(res, std::move(state));
        reply_json(res, 200, collect_tokens(*state));
      } catch (Error& e) {
        throw e.with("model", model->name());
      }
    });
  }

  // Waits for every token; the response, or the error that ended the request.
  static std::string collect_tokens(GenerateStreamState& state) {
    GenerateResult result{state.model->name(), state.model->version(), {}, FinishReason::kNone};
    for (;;) {
      const TokenEvent e = state.tokens->next();
      if (e.kind == TokenEvent::kFailed) throw Error(e.error_kind, e.error);
      if (e.kind == TokenEvent::kCancelled) throw Error(ErrorKind::kInterrupted, "the client went away");
      result.output_ids.push_back(e.token);
      if (e.reason == FinishReason::kNone) continue;
      result.reason = e.reason;
      return generate_response_json(result, state.request);
    }
  }

  static void start_stream(httplib::Response& res, std::shared_ptr<GenerateStreamState> state) {
    res.status = 200;
    start_event_stream(res, [state](std::string* out, bool* last) {
      *out = state->next_event(last);
      return !out->empty();
    });
  }

  void model_metadata(const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] {
      const auto model = repository->find(match(req, 1), match(req, 2));
      std::string versions = "[";
      for (const std::string& v : repository->versions(model->name()))
        versions += (versions.size() > 1 ? "," : "") + json_string(v);
      reply_json(res, 200,
                 "{\"name\":" + json_string(model->name()) + ",\"versions\":" + versions + "],\"platform\":\"" +
                     model->platform() + "\",\"inputs\":" + tensor_metadata_json(model->inputs()) +
                     ",\"outputs\":" + tensor_metadata_json(model->outputs()) + "}");
    });
  }

  void model_ready(const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] {
      const std::string name = match(req, 1);
      try {
        repository->find(name, match(req, 2));
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kNotFound) throw;
        reply_json(res, 503, "{\"name\":" + json_string(name) + ",\"ready\":false}");
        return;
      }
      reply_json(res, 200, "{\"name\":" + json_string(name) + ",\"ready\":true}");
    });
  }

  CloseWatchFactory watch_factory() {
    return [this](std::function<void()> on_close) {
      return std::shared_ptr<void>(server.watch_close(std::move(on_close)));
    };
  }

  void routes() {
    add_openai_routes(server, repository, options.api_key, watch_factory());
    server.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) {
      reply_json(res, 200, "{\"live\":true}");
    });
    server.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
      const bool ready = repository->all_ready();
      reply_json(res, ready ? 200 : 503, ready ? "{\"ready\":true}" : "{\"ready\":false}");
    });
    server.Get("/v2", [this](const httplib::Request&, httplib::Response& res) {
      std::string extensions;
      for (const std::string& e : info.extensions) extensions += (extensions.empty() ? "" : ",") + json_string(e);
      reply_json(res, 200, "{\"name\":" + json_string(info.name) + ",\"version\":" + json_string(info.version) +
                               ",\"extensions\":[" + extensions + "]}");
    });
    const std::string model = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
    server.Get(model, [this](const httplib::Request& req, httplib::Response& res) { model_metadata(req, res); });
    server.Get(model + "/ready",
               [this](const httplib::Request& req, httplib::Response& res) { model_ready(req, res); });
    server.Post(model + "/infer", [this](const httplib::Request& req, httplib::Response& res) { infer(req, res); });
    server.Post(model + "/generate",
                [this](const httplib::Request& req, httplib::Response& res) { generate(req, res, false); });
    server.Post(model + "/generate_stream",
                [this](const httplib::Request& req, httplib::Response& res) { generate(req, res, true); });
    // A route that exists for another verb: 405 with the verb it takes (RFC 9110 15.5.6).
    const auto post_only = [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", "POST");
      reply_json(res, 405, error_json(req.method + " " + req.path + ": this endpoint takes POST"));
    };
    server.Get(model + "/infer", post_only);
    server.Get(model + "/generate", post_only);
    server.Get(model + "/generate_stream", post_only);
    server.Get("/v2/repository/index", post_only);
    server.Get(R"(/v2/repository/models/([^/]+)/(load|unload))", post_only);
    server.Post("/v2/repository/index", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const bool ready_only = decode_index_request(req.body);
        std::string out = "[";
        for (const IndexEntry& e : repository->index(ready_only)) {
          if (out.size() > 1) out += ",";
          out += "{\"name\":" + json_string(e.name);
          if (!e.version.empty()) out += ",\"version\":" + json_string(e.version);
          out += ",\"state\":" + json_string(e.state) + ",\"reason\":" + json_string(e.reason) + "}";
        }
        reply_json(res, 200, out + "]");
      });
    });
    server.Post(R"(/v2/repository/models/([^/]+)/(load|unload))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  guarded(res, [&] {
                    const std::string name = match(req, 1);
                    const std::string refusal = repository->control_refusal(match(req, 2) == "load" ? "load" : "unload");
                    if (!refusal.empty()) {
                      reply_json(res, 403, error_json(refusal + " [model: " + name + "]"));
                      return;
                    }
                    if (match(req, 2) == "load") {
                      check_load_request(req.body);
                      repository->load(name);
                    } else {
                      repository->unload(name);
                    }
                    reply_json(res, 200, "{}");
                  });
                });
    // A compressed body is refused before the library inflates it: inflating first would let
    // a small request (a gzip bomb) become gigabytes, past --max-request-bytes.
    // Chunked bodies are refused too: cpp-httplib 0.11 does not hold them to the body limit.
    server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      const std::string encoding = req.get_header_value("Content-Encoding");
      const bool compressed = !encoding.empty() && encoding != "identity";
      const bool chunked = req.has_header("Transfer-Encoding");
      if (!compressed && !chunked) return httplib::Server::HandlerResponse::Unhandled;
      close_after_response = true;
      res.set_header("Connection", "close");
      if (compressed)
        reply_json(res, 415, error_json("Content-Encoding '" + encoding + "' is not accepted: send the body as is"));
      else
        reply_json(res, 411, error_json("Transfer-Encoding '" + req.get_header_value("Transfer-Encoding") +
                                        "' is not accepted: send Content-Length"));
      return httplib::Server::HandlerResponse::Handled;
    });
    // Errors the library raised itself (our handlers always answer with a body): the request's
    // framing is in doubt (a body over the limit, a broken chunked body, a bad request line),
    // so the connection closes after the answer, except for an unknown route.
    server.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status != 404) {
        close_after_response = true;
        res.set_header("Connection", "close");
      }
      if (res.status == 413)
        res.set_content(error_json("request body larger than --max-request-bytes (" +
                                   std::to_string(options.max_request_bytes) + ")"),
                        kJson);
      else if (res.status == 404)
        res.set_content(error_json("no endpoint " + req.method + " " + req.path), kJson);
      else if (res.status == 400)
        res.set_content(error_json("malformed HTTP request, or a chunked body that is malformed or larger than "
                                   "--max-request-bytes (" + std::to_string(options.max_request_bytes) + ")"),
                        kJson);
      else
        res.set_content(error_json("HTTP error " + std::to_string(res.status)), kJson);
    });
  }
};

HttpFrontend::HttpFrontend(Repository* repository, const ServerInfo& info, const HttpOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->repository = repository;
  impl_->info = info;
  impl_->info.extensions.push_back("generate");  // Triton's generate extension is REST only
  impl_->options = options;
  PipelinedServer& s = impl_->server;
  s.workers = options.threads;
  s.limits.max_header_bytes = options.max_header_bytes;
  s.limits.max_body_bytes = options.max_request_bytes;
  s.limits.read_timeout_ms = options.read_timeout_ms;
  s.limits.request_timeout_ms = options.request_timeout_ms;
  s.limits.keep_alive_timeout_ms = options.keep_alive_timeout_ms;
  s.limits.write_timeout_ms = options.read_timeout_ms;
  s.limits.max_connections = options.max_connections;
  s.set_payload_max_length(options.max_request_bytes);
  // What the Keep-Alive response header announces.
  s.set_keep_alive_timeout(std::max(1, options.keep_alive_timeout_ms / 1000));
  s.set_keep_alive_max_count(s.max_requests_per_connection);
  impl_->routes();
}

HttpFrontend::~HttpFrontend() = default;

int HttpFrontend::bind() { return bind_server(impl_->server, impl_->options.host, impl_->options.port, "HTTP"); }
void HttpFrontend::serve() {
  impl_->server.start();
  impl_->server.listen_after_bind();
  impl_->server.finish();
}
bool HttpFrontend::running() const { return impl_->server.is_running(); }
void HttpFrontend::stop() { impl_->server.stop(); }

struct MetricsFrontend::Impl {
  Metrics* metrics = nullptr;
  std::string host;
  int port = 0;
  PipelinedServer server;
};

MetricsFrontend::MetricsFrontend(Metrics* metrics, const std::string& host, int port)
    : impl_(std::make_unique<Impl>()) {
  impl_->metrics = metrics;
  impl_->host = host;
  impl_->port = port;
  impl_->server.workers = 2;
  impl_->server.limits.read_timeout_ms = 5000;
  impl_->server.limits.request_timeout_ms = 5000;
  impl_->server.limits.max_connections = 64;
  impl_->server.set_payload_max_length(1 << 16);
  Metrics* m = metrics;
  impl_->server.Get("/metrics", [m](const httplib::Request&, httplib::Response& res) {
    res.set_content(m->render(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

MetricsFrontend::~MetricsFrontend() = default;
int MetricsFrontend::bind() { return bind_server(impl_->server, impl_->host, impl_->port, "metrics"); }
void MetricsFrontend::serve() {
  impl_->server.start();
  impl_->server.listen_after_bind();
  impl_->server.finish();
}
bool MetricsFrontend::running() const { return impl_->server.is_running(); }
void MetricsFrontend::stop() { impl_->server.stop(); }

}  // namespace graphrt_serve
