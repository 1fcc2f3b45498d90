// grpc.health.v1 (health.proto) as the gRPC front end serves it: Check answered from one
// state, Watch calls streamed each change of it until the server shuts down.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>

#include "health.grpc.pb.h"

namespace graphrt_serve {

using HealthResponse = grpc::health::v1::HealthCheckResponse;
using HealthService = grpc::health::v1::Health::AsyncService;

class HealthWatch;

// grpc.health.v1's state: one status for the server ("") and the inference service (ready:
// every model loaded), and the Watch calls open on it.
class HealthState {
 public:
  // The status of `service` now; SERVICE_UNKNOWN for one the server does not serve.
  HealthResponse::ServingStatus status(const std::string& service) const {
    if (!service.empty() && service != "inference.GRPCInferenceService") return HealthResponse::SERVICE_UNKNOWN;
    return serving_.load() ? HealthResponse::SERVING : HealthResponse::NOT_SERVING;
  }
  // The Check RPC's answer: NOT_FOUND for a service the server does not serve.
  grpc::Status check(const grpc::health::v1::HealthCheckRequest& request, HealthResponse* out) const;
  // Has the next Watch call waited for on `queue`.
  void wait_for_watch(HealthService* service, grpc::ServerCompletionQueue* queue);
  void set_serving(bool serving);
  // Registers an open Watch call; false once the watches are ended (shutdown).
  bool add(HealthWatch* watch);
  void remove(HealthWatch* watch);
  // Ends every Watch call (after its last status is sent); later ones end at once.
  void end_watches();

 private:
  std::atomic<bool> serving_{false};
  std::mutex mutex_;
  std::set<HealthWatch*> watches_;
  bool ended_ = false;
};

}  // namespace graphrt_serve
