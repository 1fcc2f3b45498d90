// The gRPC form of an inference request (ModelInferRequest, typed contents or
// raw_input_contents) turned into the request the models take. Its input is a message parsed
// from untrusted bytes: every count, shape and length is checked
// (fuzz/serve_grpc_request_fuzz.cc).
#pragma once

#include "grpc_service.pb.h"
#include "protocol/infer_request.h"

namespace graphrt_serve {

// Throws graphrt::Error (invalid argument, or unsupported for features the server lacks)
// naming the tensor and field at fault. Raw contents are views into `request`, which must
// outlive the result.
InferRequest decode_grpc_request(const inference::ModelInferRequest& request);

}  // namespace graphrt_serve
