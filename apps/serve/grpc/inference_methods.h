// inference.GRPCInferenceService's methods (the Open Inference Protocol over gRPC): what
// each answers, apart from how calls reach it (call_engine.h, grpc_frontend.cc).
#pragma once

#include <grpcpp/grpcpp.h>

#include "grpc_service.pb.h"
#include "models/repository.h"
#include "server_info.h"

namespace graphrt_serve {

class InferenceMethods {
 public:
  InferenceMethods(Repository* repository, ServerInfo info);

  grpc::Status server_live(const inference::ServerLiveRequest&, inference::ServerLiveResponse* out);
  grpc::Status server_ready(const inference::ServerReadyRequest&, inference::ServerReadyResponse* out);
  grpc::Status model_ready(const inference::ModelReadyRequest& in, inference::ModelReadyResponse* out);
  grpc::Status server_metadata(const inference::ServerMetadataRequest&, inference::ServerMetadataResponse* out);
  grpc::Status model_metadata(const inference::ModelMetadataRequest& in, inference::ModelMetadataResponse* out);
  grpc::Status model_infer(const inference::ModelInferRequest& in, inference::ModelInferResponse* out);

  // Whether the inference can run on the I/O thread: it most likely returns at once (the
  // answer to an unknown model is at once too).
  bool infer_runs_at_once(const inference::ModelInferRequest& in);

 private:
  Repository* repository_;
  ServerInfo info_;
};

}  // namespace graphrt_serve
