// Encoding of responses for the REST front end: the inference response (JSON,
// optionally followed by Triton's binary tensor data), and the JSON text
// helpers the other endpoints share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/json_writer.h"
#include "protocol/infer_request.h"

namespace graphrt_serve {

// One output of a run, as a response carries it.
struct OutputTensor {
  std::string name;
  Datatype datatype = Datatype::kFp32;
  std::vector<int64_t> shape;
  // The elements, little-endian and row-major: either a view of the run's own output (valid
  // while whoever returned this holds the instance that ran: models/served_model.h's
  // InferResult), or a copy in `owned`.
  const char* view = nullptr;
  size_t view_size = 0;
  std::string owned;

  const char* data() const { return view ? view : owned.data(); }
  size_t size() const { return view ? view_size : owned.size(); }
};

struct InferResponse {
  std::string model_name, model_version;
  bool has_id = false;
  std::string id;
  std::vector<OutputTensor> outputs;
};

// The response body. Outputs go as binary data where the request asked for it
// ("binary_data" on the output, else "binary_data_output"); *json_size is then the
// JSON header's length (Inference-Header-Content-Length), else the body's.
std::string encode_rest_response(const InferResponse& response, const InferRequest& request, size_t* json_size);

// `text` as a JSON string literal (graphrt's one JSON writer: bytes that are not UTF-8 become U+FFFD).
using graphrt::json_string;
// {"error": "<message>"}
std::string error_json(const std::string& message);
// Appends the elements of a tensor's bytes as JSON values (BOOL as true/false, FP16/BF16 as
// numbers, BYTES as strings; non-finite floats as NaN/Infinity, which strict JSON lacks).
void append_json_values(std::string* out, Datatype type, const char* data, size_t size);

}  // namespace graphrt_serve
