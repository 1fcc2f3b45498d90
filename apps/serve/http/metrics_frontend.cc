#include "http/metrics_frontend.h"

#include "http/connection_reactor.h"

namespace graphrt_serve {

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
