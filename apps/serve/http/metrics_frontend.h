// The Prometheus metrics port: GET /metrics in Prometheus' text format, on its own connection
// layer (2 workers, 64 connections, 5 s deadlines).
#pragma once

#include <memory>
#include <string>

#include "metrics/metrics.h"

namespace graphrt_serve {

class MetricsFrontend {
 public:
  MetricsFrontend(Metrics* metrics, const std::string& host, int port);
  ~MetricsFrontend();
  // Binds the port; returns the port bound. Throws graphrt::Error when it cannot.
  int bind();
  // Serves until stop().
  void serve();
  bool running() const;
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphrt_serve
