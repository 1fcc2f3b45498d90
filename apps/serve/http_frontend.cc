#include "http_frontend.h"

#include <httplib.h>

#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "graphrt/error.h"
#include "infer_request.h"
#include "infer_response.h"
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

// A connection's byte stream with its own read buffer that lives as long as the connection:
// bytes of a pipelined request that arrived with the previous one stay in it, and
// "readable" counts them. (The library's own connection loop waits on the socket only, so it
// stalls on pipelined requests until the keep-alive timeout.)
class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(int fd, int read_timeout_ms, int write_timeout_ms)
      : fd_(fd), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms) {}

  bool is_readable() const override { return pos_ < end_ || wait(POLLIN, read_timeout_ms_); }
  bool is_writable() const override { return wait(POLLOUT, write_timeout_ms_); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == end_) {
      if (!wait(POLLIN, read_timeout_ms_)) return -1;
      ssize_t n;
      do {
        n = ::recv(fd_, buffer_, sizeof buffer_, 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - pos_);
    std::memcpy(ptr, buffer_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait(POLLOUT, write_timeout_ms_)) return -1;
    ssize_t n;
    do {
      n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(false, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(true, ip, port); }
  socket_t socket() const override { return fd_; }

  // Waits up to `timeout_ms` for the next request, `stopping` checked every 50 ms so that a
  // stop does not wait for idle connections.
  template <typename F>
  bool wait_for_request(int timeout_ms, F&& stopping) const {
    if (pos_ < end_) return true;
    for (int waited = 0; waited < timeout_ms; waited += 50) {
      if (stopping()) return false;
      if (wait(POLLIN, std::min(50, timeout_ms - waited))) return true;
    }
    return false;
  }

 private:
  bool wait(short events, int timeout_ms) const {
    pollfd p{fd_, events, 0};
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
    if ((local ? getsockname(fd_, a, &len) : getpeername(fd_, a, &len)) != 0) return;
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getnameinfo(a, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host;
      port = std::atoi(serv);
    }
  }

  int fd_;
  int read_timeout_ms_, write_timeout_ms_;
  char buffer_[16384];
  size_t pos_ = 0, end_ = 0;
};

// The library's server with the connection loop above: keep-alive with pipelining, idle
// connections closed promptly on stop, requests in flight answered (with Connection: close).
class PipelinedServer : public httplib::Server {
 public:
  int read_timeout_ms = 10000;
  int keep_alive_timeout_ms = 5000;
  size_t max_requests_per_connection = 1000000;

 private:
  bool process_and_close_socket(socket_t sock) override {
    const int one = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ConnectionStream stream(sock, read_timeout_ms, read_timeout_ms);
    auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
    bool ok = true;
    for (size_t left = max_requests_per_connection; left > 0; --left) {
      if (!stream.wait_for_request(keep_alive_timeout_ms, stopping)) break;
      bool closed = false;
      close_after_response = false;
      ok = process_request(stream, left == 1 || stopping(), closed, nullptr);
      if (!ok || closed || close_after_response) break;
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }
};

// The HTTP library takes ownership of the task queue it is given (a raw pointer by its API).
void use_thread_pool(httplib::Server& server, int threads) {
  const size_t n = static_cast<size_t>(threads);
  server.new_task_queue = [n] { return new httplib::ThreadPool(n); };
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
        InferResponse response;
        response.outputs = model->infer(request, &timings);
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

  void routes() {
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
  impl_->options = options;
  PipelinedServer& s = impl_->server;
  use_thread_pool(s, options.threads);
  s.set_payload_max_length(options.max_request_bytes);
  s.read_timeout_ms = options.read_timeout_ms;
  s.keep_alive_timeout_ms = options.keep_alive_timeout_s * 1000;
  // What the Keep-Alive response header announces.
  s.set_keep_alive_timeout(options.keep_alive_timeout_s);
  s.set_keep_alive_max_count(s.max_requests_per_connection);
  impl_->routes();
}

HttpFrontend::~HttpFrontend() = default;

int HttpFrontend::bind() { return bind_server(impl_->server, impl_->options.host, impl_->options.port, "HTTP"); }
void HttpFrontend::serve() { impl_->server.listen_after_bind(); }
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
  use_thread_pool(impl_->server, 2);
  impl_->server.read_timeout_ms = 5000;
  impl_->server.set_payload_max_length(1 << 16);
  Metrics* m = metrics;
  impl_->server.Get("/metrics", [m](const httplib::Request&, httplib::Response& res) {
    res.set_content(m->render(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

MetricsFrontend::~MetricsFrontend() = default;
int MetricsFrontend::bind() { return bind_server(impl_->server, impl_->host, impl_->port, "metrics"); }
void MetricsFrontend::serve() { impl_->server.listen_after_bind(); }
bool MetricsFrontend::running() const { return impl_->server.is_running(); }
void MetricsFrontend::stop() { impl_->server.stop(); }

}  // namespace graphrt_serve
