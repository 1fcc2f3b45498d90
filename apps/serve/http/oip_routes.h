// The Open Inference Protocol's REST routes (KServe v2, with Triton's binary tensor data,
// model repository and generate extensions): health, server and model metadata, readiness,
// infer, generate and generate_stream, the repository index and load/unload; the library's
// own errors (413, 404, 400) and refused framings (411, 415) as the protocol's error bodies.
#pragma once

#include <cstddef>
#include <memory>

#include "http/openai_routes.h"  // CloseWatchFactory
#include "models/repository.h"
#include "server_info.h"

namespace httplib {
class Server;
}

namespace graphrt_serve {

// Owns what the routes use: it must outlive the server the routes are added to.
class OipRoutes {
 public:
  OipRoutes(Repository* repository, const ServerInfo& info, size_t max_request_bytes, CloseWatchFactory watch_close);
  ~OipRoutes();
  void add_to(httplib::Server& server);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphrt_serve
