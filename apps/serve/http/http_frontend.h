// The REST front end (Open Inference Protocol over HTTP/1.1 with keep-alive,
// Triton's binary tensor data and model repository extensions) and the
// Prometheus metrics endpoint. The only files that see the HTTP library.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "models/repository.h"
#include "server_info.h"

namespace graphrt_serve {

struct HttpOptions {
  std::string host = "0.0.0.0";
  int port = 8000;              // 0: any free port
  int threads = 64;             // requests served at once (a connection holds none while it sends)
  size_t max_request_bytes = size_t(64) << 20;
  size_t max_header_bytes = 64 * 1024;  // request line + headers; larger: 431
  int read_timeout_ms = 10000;  // a client silent this long in the middle of a request is dropped (408)
  int request_timeout_ms = 30000;  // a request's first byte to its last; slower: 408
  int keep_alive_timeout_ms = 5000;  // an idle keep-alive connection is closed after this
  size_t max_connections = 1000;     // open at once; one more gets 503
  std::string api_key;               // the /v1 endpoints' Bearer key; "": none needed
};

class HttpFrontend {
 public:
  HttpFrontend(Repository* repository, const ServerInfo& info, const HttpOptions& options);
  ~HttpFrontend();
  // Binds the port; returns the port bound. Throws graphrt::Error when it cannot.
  int bind();
  // Serves until stop(); returns when requests in flight are answered.
  void serve();
  // True once serve() listens.
  bool running() const;
  // Drains: new requests get 503 (health checks are answered: readiness says the server is
  // going), requests in flight and event streams are answered to their end; then the port
  // closes and serve() returns.
  void stop();
  // After stop(), when the drain may last no longer: every event stream still open ends with an
  // error event saying `why` and its closing chunk; waits up to `wait_ms` for them to be written.
  void cut_streams(const std::string& why, int wait_ms);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphrt_serve
