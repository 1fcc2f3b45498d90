// libFuzzer target: graphrt-serve's REST request decoder (JSON and Triton's binary tensor data).
// The first input byte chooses the Inference-Header-Content-Length header: absent (0), or
// the byte's value read as a length (a lie as often as not); the rest is the body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "protocol/infer_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string header;
  const std::string* header_ptr = nullptr;
  if (data[0] != 0) {
    // 255: the whole body is the JSON header; other values: that many bytes are.
    header = std::to_string(data[0] == 255 ? body.size() : data[0]);
    header_ptr = &header;
  }
  try {
    graphrt_serve::InferRequest r = graphrt_serve::decode_rest_request(body.data(), body.size(), header_ptr);
    size_t total = 0;
    for (const auto& in : r.inputs) {
      // Every tensor's bytes lie inside the body or were decoded; binary views never overlap.
      if (in.view && (in.view < body.data() || in.view + in.view_size > body.data() + body.size())) __builtin_trap();
      graphrt_serve::check_tensor_bytes(in.name, in.datatype, in.shape, in.data(), in.size());
      total += in.view_size;
    }
    if (total > body.size()) __builtin_trap();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
