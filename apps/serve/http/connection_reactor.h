// The connection layer under the HTTP library: one reactor thread (epoll) holds every open
// connection and reads requests as their bytes come; a request received whole goes to a worker
// of a pool, which runs it through the library's parser and router over the buffered bytes and
// writes the answer. Used by the REST front end and the metrics front end.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace graphrt_serve {

class EventSource;
class StreamConnection;

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
  ~Connection();  // shuts the socket down and closes it
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  int fd;
  std::string in;        // received bytes not yet served
  size_t head_end = 0;   // the current request's head length once complete, else 0
  size_t need = 0;       // the current request's whole length once its head is parsed
  bool continue_sent = false;
  bool in_request = false;  // bytes of a request received (else idle)
  size_t served = 0;
  std::chrono::steady_clock::time_point request_start, last_activity;
};

// The library's server with the connection layer above: keep-alive with pipelining, bounded
// heads, request and idle deadlines, idle connections closed promptly on stop, requests in
// flight answered (with Connection: close).
class PipelinedServer : public httplib::Server {
 public:
  ConnectionLimits limits;
  int workers = 4;
  size_t max_requests_per_connection = 1000000;

  PipelinedServer();
  ~PipelinedServer() override;

  // Before listen_after_bind(): starts the reactor and the workers.
  void start();

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
  void finish();

  // Instead of stop(): requests in flight and event streams are answered to their end while the
  // port still takes connections, whose requests get 503 (health checks but for their own
  // answer); then the listener closes and serve's listen_after_bind() returns.
  void drain();

  // The process is about to exit (its exit timeout passed): every event stream still open ends
  // now with an error event saying `why` and its closing chunk; waits up to `wait_ms` for them
  // to be written (a client that does not read gets none of it).
  void cut_streams(const std::string& why, int wait_ms);

 private:
  // Stopped listening (stop()), or draining (drain()).
  bool stopping() const { return draining_.load() || svr_sock_ == INVALID_SOCKET; }

  void wake();

  // On the accepting thread: the connection joins the reactor, or is refused when too many are open.
  bool process_and_close_socket(socket_t sock) override;

  void hand_to_reactor(std::unique_ptr<Connection> c);

  void close_connection(std::unique_ptr<Connection> c);

  using ConnectionMap = std::map<int, std::unique_ptr<Connection>>;
  using StreamMap = std::map<int, std::unique_ptr<StreamConnection>>;
  void reactor_loop();
  void watch_for_requests(std::unique_ptr<Connection> c);
  void read_requests(ConnectionMap::iterator it, std::chrono::steady_clock::time_point now,
                     std::chrono::steady_clock::time_point refuse_after);
  StreamMap::iterator settle_stream(StreamMap::iterator s, bool stop);
  StreamMap::iterator end_stream(StreamMap::iterator s, bool close);
  void expire(std::chrono::steady_clock::time_point now, bool stop, std::chrono::steady_clock::time_point stop_seen);
  // A worker's handler answered with an event stream: the reactor writes it from now on.
  void hand_stream_to_reactor(std::unique_ptr<Connection> c, size_t consumed, bool last);
  // From any thread: the stream on `fd` may have events.
  void stream_ready(int fd);

  // The worker that went idle last takes the request (a stack, not a queue): a light load
  // keeps running on the same few threads, so the per-thread state a request leaves behind
  // (malloc arenas, kernels' workspace pools, warm caches) exists for those few, not for every
  // --http-threads worker in turn.
  void dispatch(std::unique_ptr<Connection> c);

  void worker_loop();

  // Answers the whole request at the front of c->in, then any pipelined one behind it; hands
  // the connection back to the reactor or closes it.
  void serve_connection(std::unique_ptr<Connection> c);

  // A client on a keep-alive connection often sends its next request as soon as it has read
  // the answer: waiting a moment for it here saves the round trip through the reactor (two
  // epoll changes and two thread wake-ups, most of a small request's time). Only while no
  // request waits for a worker and the server is not stopping, for at most 1 ms, and only
  // bytes already sent are read: a slow client holds a worker for the linger, no longer (what
  // it has not sent whole, the reactor goes on reading). True when bytes came.
  bool linger_for_next(Connection& c);

  // A connection being handled is out of the epoll set; a watch puts it back for its close
  // alone (EPOLLRDHUP, one shot: no event for pipelined bytes, none repeated).
  void unwatch(int fd);

  void fire_watch(int fd);

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
  std::vector<std::unique_ptr<StreamConnection>> streams_to_reactor_;  // guarded by mutex_, as the four below
  std::vector<int> ready_streams_;
  size_t streams_open_ = 0;
  bool cut_ = false;
  std::string cut_why_;
  std::condition_variable streams_gone_;
  ConnectionMap conns_;  // the reactor thread's alone, as streams_
  StreamMap streams_;
  bool workers_done_ = false;
  std::atomic<size_t> open_{0};
  std::atomic<bool> draining_{false};
};

// Called by a handler: the connection whose request this thread handles closes after its
// answer (the request's body was not read, so what follows on the connection is not a request).
void close_after_response();

// Called by a handler: the answer is the event stream of `source`, written by the reactor once
// the handler has returned (http/event_stream.h). Throws graphrt::Error outside a handler.
void answer_with_stream(std::unique_ptr<EventSource> source, bool http10, bool keep_alive);

// Binds `server` to host:port (0: any free port); returns the port. Throws graphrt::Error naming `what`.
int bind_server(httplib::Server& server, const std::string& host, int port, const char* what);

}  // namespace graphrt_serve
