#include "http/http_frontend.h"

#include <algorithm>

#include "http/connection_reactor.h"
#include "http/oip_routes.h"
#include "http/openai_routes.h"

namespace graphrt_serve {

struct HttpFrontend::Impl {
  Repository* repository = nullptr;
  ServerInfo info;
  HttpOptions options;
  PipelinedServer server;
  std::unique_ptr<OipRoutes> oip_routes;

  CloseWatchFactory watch_factory() {
    return [this](std::function<void()> on_close) {
      return std::shared_ptr<void>(server.watch_close(std::move(on_close)));
    };
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
  add_openai_routes(s, repository, options.api_key, impl_->watch_factory());
  impl_->oip_routes = std::make_unique<OipRoutes>(repository, impl_->info, options.max_request_bytes, impl_->watch_factory());
  impl_->oip_routes->add_to(s);
}

HttpFrontend::~HttpFrontend() = default;

int HttpFrontend::bind() { return bind_server(impl_->server, impl_->options.host, impl_->options.port, "HTTP"); }
void HttpFrontend::serve() {
  impl_->server.start();
  impl_->server.listen_after_bind();
  impl_->server.finish();
}
bool HttpFrontend::running() const { return impl_->server.is_running(); }
void HttpFrontend::stop() { impl_->server.drain(); }
void HttpFrontend::cut_streams(const std::string& why, int wait_ms) { impl_->server.cut_streams(why, wait_ms); }

}  // namespace graphrt_serve
