#include "protocol/infer_response.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "graphrt/float16.h"

namespace graphrt_serve {

namespace {

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void append_number(std::string* out, T v) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(v)) {
      out->append("NaN");
      return;
    }
    if (std::isinf(v)) {
      out->append(v > 0 ? "Infinity" : "-Infinity");
      return;
    }
    // to_chars writes "-0", which JSON readers take for the integer 0: the sign would be lost.
    if (v == 0 && std::signbit(v)) {
      out->append("-0.0");
      return;
    }
  }
  char buf[64];
  // Shortest text that reads back as the same value of type T: floats round-trip exactly.
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

void append_shape(std::string* out, const std::vector<int64_t>& shape) {
  out->push_back('[');
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out->push_back(',');
    append_number(out, shape[i]);
  }
  out->push_back(']');
}

}  // namespace

std::string error_json(const std::string& message) { return "{\"error\":" + json_string(message) + "}"; }

void append_json_values(std::string* out, Datatype type, const char* data, size_t size) {
  out->push_back('[');
  const size_t elem = datatype_size(type);
  if (type == Datatype::kBytes) {
    size_t pos = 0;
    bool first = true;
    while (pos + 4 <= size) {
      const uint32_t len = load<uint32_t>(data + pos);
      pos += 4;
      if (len > size - pos) break;
      if (!first) out->push_back(',');
      first = false;
      graphrt::append_json_string(out, std::string_view(data + pos, len));
      pos += len;
    }
    out->push_back(']');
    return;
  }
  const size_t n = size / elem;
  for (size_t i = 0; i < n; ++i) {
    if (i) out->push_back(',');
    const char* p = data + i * elem;
    switch (type) {
      case Datatype::kBool: out->append(*p ? "true" : "false"); break;
      case Datatype::kUint8: append_number(out, load<uint8_t>(p)); break;
      case Datatype::kUint16: append_number(out, load<uint16_t>(p)); break;
      case Datatype::kUint32: append_number(out, load<uint32_t>(p)); break;
      case Datatype::kUint64: append_number(out, load<uint64_t>(p)); break;
      case Datatype::kInt8: append_number(out, load<int8_t>(p)); break;
      case Datatype::kInt16: append_number(out, load<int16_t>(p)); break;
      case Datatype::kInt32: append_number(out, load<int32_t>(p)); break;
      case Datatype::kInt64: append_number(out, load<int64_t>(p)); break;
      case Datatype::kFp16: append_number(out, graphrt::float16_to_float(load<uint16_t>(p))); break;
      case Datatype::kBf16: append_number(out, graphrt::bfloat16_to_float(load<uint16_t>(p))); break;
      case Datatype::kFp32: append_number(out, load<float>(p)); break;
      case Datatype::kFp64: append_number(out, load<double>(p)); break;
      case Datatype::kBytes: break;
    }
  }
  out->push_back(']');
}

std::string encode_rest_response(const InferResponse& response, const InferRequest& request, size_t* json_size) {
  std::string out = "{\"model_name\":" + json_string(response.model_name) +
                    ",\"model_version\":" + json_string(response.model_version);
  if (response.has_id) out += ",\"id\":" + json_string(response.id);
  out += ",\"outputs\":[";
  std::vector<const OutputTensor*> binary;
  for (size_t i = 0; i < response.outputs.size(); ++i) {
    const OutputTensor& t = response.outputs[i];
    int as_binary = -1;
    for (const RequestedOutput& r : request.outputs)
      if (r.name == t.name) as_binary = r.binary;
    if (as_binary < 0) as_binary = request.binary_output ? 1 : 0;
    if (i) out.push_back(',');
    out += "{\"name\":" + json_string(t.name) + ",\"datatype\":\"" + datatype_name(t.datatype) + "\",\"shape\":";
    append_shape(&out, t.shape);
    if (as_binary) {
      out += ",\"parameters\":{\"binary_data_size\":" + std::to_string(t.size()) + "}}";
      binary.push_back(&t);
    } else {
      out += ",\"data\":";
      append_json_values(&out, t.datatype, t.data(), t.size());
      out.push_back('}');
    }
  }
  out += "]}";
  *json_size = out.size();
  size_t binary_bytes = 0;
  for (const OutputTensor* t : binary) binary_bytes += t->size();
  out.reserve(out.size() + binary_bytes);
  for (const OutputTensor* t : binary) out.append(t->data(), t->size());
  return out;
}

}  // namespace graphrt_serve
