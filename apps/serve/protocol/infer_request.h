// An inference request as the protocol front ends hand it to a model, and the
// decoder of the REST form (JSON, optionally followed by Triton's binary tensor
// data). The decoder reads untrusted bytes: every length, count and shape is
// checked before it is used (fuzz/serve_request_fuzz.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/datatype.h"

namespace graphrt_serve {

struct InputTensor {
  std::string name;
  Datatype datatype = Datatype::kFp32;
  std::vector<int64_t> shape;
  // The elements, little-endian and row-major (BYTES: each element a 4-byte
  // length then its bytes): either decoded from JSON into `decoded`, or a view
  // of binary data owned by whoever owns the request body.
  std::string decoded;
  const char* view = nullptr;
  size_t view_size = 0;

  const char* data() const { return view ? view : decoded.data(); }
  size_t size() const { return view ? view_size : decoded.size(); }
};

struct RequestedOutput {
  std::string name;
  int binary = -1;  // -1: not said (the request's default applies), 0: JSON, 1: binary
};

struct InferRequest {
  bool has_id = false;
  std::string id;
  std::vector<InputTensor> inputs;
  std::vector<RequestedOutput> outputs;  // empty: every output
  bool binary_output = false;            // "binary_data_output"
  int64_t timeout_us = 0;                // "timeout" parameter; 0: the model's default
};

struct DecodeLimits {
  // Nesting of a JSON "data" array beyond its shape's rank is refused anyway;
  // this caps the recursion on input that never reaches the shape check.
  int max_data_depth = 64;
  size_t max_inputs = 4096;
};

// Decodes a REST inference request. `header_length` is the value of the
// Inference-Header-Content-Length header, or nullptr when absent (the whole
// body is JSON). Binary views point into `body`, which must outlive the
// request. Throws graphrt::Error (invalid argument, or unsupported for
// features the server lacks) naming the tensor and field at fault.
InferRequest decode_rest_request(const char* body, size_t size, const std::string* header_length,
                                 const DecodeLimits& limits = {});

// The repository extension's request bodies: index ({"ready": bool}, returns it; an empty
// body is false) and load ({"parameters": {...}}: "config" and "file:" overrides are refused
// as unsupported). Throw graphrt::Error on malformed bodies.
bool decode_index_request(const std::string& body);
void check_load_request(const std::string& body);

// Checks that `size` bytes are a valid element sequence for `type` and
// `shape` (BYTES: length-prefixed elements exactly filling it); throws
// graphrt::Error naming `tensor` otherwise.
void check_tensor_bytes(const std::string& tensor, Datatype type, const std::vector<int64_t>& shape,
                        const char* data, size_t size);

}  // namespace graphrt_serve
