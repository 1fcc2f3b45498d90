// libFuzzer target: graphrt-serve's gRPC request decoder. The input is a serialized
// ModelInferRequest (protobuf parses it; what it yields is as hostile as any bytes could make
// it), turned into the models' request, every tensor's bytes re-checked against its shape.
#include <cstddef>
#include <cstdint>

#include "graphrt/error.h"
#include "protocol/grpc_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  inference::ModelInferRequest message;
  if (size > static_cast<size_t>(INT32_MAX) || !message.ParseFromArray(data, static_cast<int>(size))) return 0;
  try {
    const graphrt_serve::InferRequest r = graphrt_serve::decode_grpc_request(message);
    for (const auto& in : r.inputs) graphrt_serve::check_tensor_bytes(in.name, in.datatype, in.shape, in.data(), in.size());
  } catch (const graphrt::Error&) {
  }
  return 0;
}
