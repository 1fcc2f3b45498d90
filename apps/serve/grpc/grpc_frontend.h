// The gRPC front end: inference.GRPCInferenceService (the Open Inference
// Protocol's gRPC form, inference_methods.h) and the standard grpc.health.v1
// service (health_service.h), on one completion queue (call_engine.h). The files
// of this folder (and protocol/grpc_codec) are the only ones that see gRPC and
// the generated protocol code.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "models/repository.h"
#include "server_info.h"

namespace graphrt_serve {

struct GrpcOptions {
  std::string host = "0.0.0.0";
  int port = 8001;  // 0: any free port
  size_t max_request_bytes = size_t(64) << 20;
  int threads = 64;  // calls that may block (an inference waiting or running long) served at once
};

class GrpcFrontend {
 public:
  GrpcFrontend(Repository* repository, const ServerInfo& info, const GrpcOptions& options);
  ~GrpcFrontend();
  // Starts serving; returns the port bound. Throws graphrt::Error when it cannot bind.
  int start();
  // Health turns NOT_SERVING, new RPCs are refused, RPCs in flight finish; then returns.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphrt_serve
