#include "protocol/grpc_codec.h"

#include <cstring>
#include <limits>
#include <string>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

[[noreturn]] void fail(const std::string& tensor, const std::string& field, const std::string& message) {
  Error e(message);
  if (!tensor.empty()) e.with("tensor", tensor);
  throw e.with("field", field);
}

template <typename T>
void append(std::string* out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

// Typed contents of one datatype into tensor bytes; `Narrow` is the element type in memory,
// checked against its range.
template <typename Narrow, typename Field>
void narrow_into(const Field& values, const std::string& tensor, const char* field, std::string* out) {
  out->reserve(values.size() * sizeof(Narrow));
  for (auto v : values) {
    if (v < static_cast<decltype(v)>(std::numeric_limits<Narrow>::min()) ||
        v > static_cast<decltype(v)>(std::numeric_limits<Narrow>::max()))
      fail(tensor, field, "element " + std::to_string(v) + " is out of range");
    append(out, static_cast<Narrow>(v));
  }
}

int64_t contents_count(const inference::InferTensorContents& c) {
  return c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() + c.uint_contents_size() +
         c.uint64_contents_size() + c.fp32_contents_size() + c.fp64_contents_size() + c.bytes_contents_size();
}

// The typed contents of an input as tensor bytes.
void decode_contents(const inference::InferTensorContents& c, InputTensor* t) {
  const std::string& n = t->name;
  std::string* out = &t->decoded;
  int64_t used = 0;
  switch (t->datatype) {
    case Datatype::kBool:
      for (bool b : c.bool_contents()) out->push_back(b ? 1 : 0);
      used = c.bool_contents_size();
      break;
    case Datatype::kInt8: narrow_into<int8_t>(c.int_contents(), n, "contents.int_contents", out); used = c.int_contents_size(); break;
    case Datatype::kInt16: narrow_into<int16_t>(c.int_contents(), n, "contents.int_contents", out); used = c.int_contents_size(); break;
    case Datatype::kInt32: narrow_into<int32_t>(c.int_contents(), n, "contents.int_contents", out); used = c.int_contents_size(); break;
    case Datatype::kInt64: narrow_into<int64_t>(c.int64_contents(), n, "contents.int64_contents", out); used = c.int64_contents_size(); break;
    case Datatype::kUint8: narrow_into<uint8_t>(c.uint_contents(), n, "contents.uint_contents", out); used = c.uint_contents_size(); break;
    case Datatype::kUint16: narrow_into<uint16_t>(c.uint_contents(), n, "contents.uint_contents", out); used = c.uint_contents_size(); break;
    case Datatype::kUint32: narrow_into<uint32_t>(c.uint_contents(), n, "contents.uint_contents", out); used = c.uint_contents_size(); break;
    case Datatype::kUint64: narrow_into<uint64_t>(c.uint64_contents(), n, "contents.uint64_contents", out); used = c.uint64_contents_size(); break;
    case Datatype::kFp32:
      for (float v : c.fp32_contents()) append(out, v);
      used = c.fp32_contents_size();
      break;
    case Datatype::kFp64:
      for (double v : c.fp64_contents()) append(out, v);
      used = c.fp64_contents_size();
      break;
    case Datatype::kBytes:
      for (const std::string& s : c.bytes_contents()) {
        if (s.size() > std::numeric_limits<uint32_t>::max()) fail(n, "contents.bytes_contents", "element over 4 GiB");
        append(out, static_cast<uint32_t>(s.size()));
        out->append(s);
      }
      used = c.bytes_contents_size();
      break;
    case Datatype::kFp16: case Datatype::kBf16:
      if (contents_count(c) == 0) break;
      fail(n, "contents", std::string(datatype_name(t->datatype)) + " has no typed contents field: use raw_input_contents");
  }
  if (used != contents_count(c))
    fail(n, "contents", std::string("holds values in a field other than the one for ") + datatype_name(t->datatype));
}

}  // namespace

InferRequest decode_grpc_request(const inference::ModelInferRequest& r) {
  InferRequest req;
  req.has_id = !r.id().empty();
  req.id = r.id();
  for (const auto& kv : r.parameters()) {
    if (kv.first == "timeout") {
      if (kv.second.parameter_choice_case() != inference::InferParameter::kInt64Param || kv.second.int64_param() < 0)
        fail("", "parameters", "parameter 'timeout' must be a non-negative int64_param (microseconds)");
      req.timeout_us = kv.second.int64_param();
    }
  }
  const bool raw = r.raw_input_contents_size() > 0;
  if (raw && r.raw_input_contents_size() != r.inputs_size())
    fail("", "raw_input_contents", std::to_string(r.raw_input_contents_size()) + " entries for " +
                                       std::to_string(r.inputs_size()) + " inputs");
  for (int i = 0; i < r.inputs_size(); ++i) {
    const auto& in = r.inputs(i);
    InputTensor t;
    t.name = in.name();
    for (const InputTensor& other : req.inputs)
      if (other.name == t.name) fail(t.name, "name", "input given twice");
    if (!datatype_from_name(in.datatype(), &t.datatype))
      fail(t.name, "datatype", "'" + in.datatype() + "' is not a protocol datatype");
    for (int64_t d : in.shape()) {
      if (d < 0) fail(t.name, "shape", "dimension " + std::to_string(d) + " is negative");
      t.shape.push_back(d);
    }
    if (in.parameters().count("shared_memory_region"))
      throw Error(ErrorKind::kUnsupported, "shared memory inputs are not supported")
          .with("tensor", t.name).with("field", "parameters");
    if (raw) {
      if (contents_count(in.contents()) != 0) fail(t.name, "contents", "given together with raw_input_contents");
      t.view = r.raw_input_contents(i).data();
      t.view_size = r.raw_input_contents(i).size();
    } else {
      decode_contents(in.contents(), &t);
    }
    check_tensor_bytes(t.name, t.datatype, t.shape, t.data(), t.size());
    req.inputs.push_back(std::move(t));
  }
  for (const auto& o : r.outputs()) {
    for (const RequestedOutput& other : req.outputs)
      if (other.name == o.name()) fail(o.name(), "outputs", "output requested twice");
    if (o.parameters().count("classification"))
      throw Error(ErrorKind::kUnsupported, "classification outputs are not supported")
          .with("tensor", o.name()).with("field", "parameters");
    req.outputs.push_back(RequestedOutput{o.name(), 1});
  }
  return req;
}

}  // namespace graphrt_serve
