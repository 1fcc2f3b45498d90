#include "protocol/infer_request.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "graphrt/error.h"
#include "graphrt/float16.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using json = nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& tensor, const std::string& field, const std::string& message,
                       ErrorKind kind = ErrorKind::kInvalidArgument) {
  Error e(kind, message);
  if (!tensor.empty()) e.with("tensor", tensor);
  e.with("field", field);
  throw e;
}

const char* json_type(const json& v) { return v.type_name(); }

template <typename T>
void append(std::string* out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // little-endian host
  out->append(bytes, sizeof(T));
}

// One JSON element as `type`, appended to `out`.
void append_element(const json& v, Datatype type, const std::string& tensor, std::string* out) {
  auto bad = [&](const std::string& why) { fail(tensor, "data", "element " + v.dump() + " " + why); };
  switch (type) {
    case Datatype::kBool:
      if (!v.is_boolean()) bad(std::string("is a ") + json_type(v) + ", BOOL needs true or false");
      out->push_back(v.get<bool>() ? 1 : 0);
      return;
    case Datatype::kFp16: case Datatype::kBf16: case Datatype::kFp32: case Datatype::kFp64: {
      if (!v.is_number()) bad(std::string("is a ") + json_type(v) + ", not a number");
      const double d = v.get<double>();
      if (type == Datatype::kFp64) append(out, d);
      else if (type == Datatype::kFp32) append(out, static_cast<float>(d));
      else if (type == Datatype::kFp16) append(out, graphrt::float16_from_double(d));
      else append(out, graphrt::bfloat16_from_double(d));
      return;
    }
    case Datatype::kBytes: {
      if (!v.is_string()) bad(std::string("is a ") + json_type(v) + ", BYTES needs a string");
      const std::string& s = v.get_ref<const std::string&>();
      if (s.size() > std::numeric_limits<uint32_t>::max()) bad("is longer than 2^32 bytes");
      append(out, static_cast<uint32_t>(s.size()));
      out->append(s);
      return;
    }
    default: break;
  }
  // Integers: exact values only, within the type's range.
  if (!v.is_number_integer()) bad(std::string("is a ") + json_type(v) + ", " + datatype_name(type) + " needs an integer");
  const bool is_unsigned = type == Datatype::kUint8 || type == Datatype::kUint16 || type == Datatype::kUint32 ||
                           type == Datatype::kUint64;
  const int bits = static_cast<int>(datatype_size(type) * 8);
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    const uint64_t max = is_unsigned ? (bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t(1) << bits) - 1)
                                     : (uint64_t(1) << (bits - 1)) - 1;
    if (u > max) bad(std::string("is out of range for ") + datatype_name(type));
    if (bits == 64) append(out, u);
    else if (bits == 32) append(out, static_cast<uint32_t>(u));
    else if (bits == 16) append(out, static_cast<uint16_t>(u));
    else out->push_back(static_cast<char>(static_cast<uint8_t>(u)));
    return;
  }
  const int64_t s = v.get<int64_t>();
  if (is_unsigned && s < 0) bad(std::string("is negative, ") + datatype_name(type) + " is unsigned");
  if (!is_unsigned && bits < 64) {
    const int64_t lo = -(int64_t(1) << (bits - 1)), hi = (int64_t(1) << (bits - 1)) - 1;
    if (s < lo || s > hi) bad(std::string("is out of range for ") + datatype_name(type));
  }
  if (bits == 64) append(out, s);
  else if (bits == 32) append(out, static_cast<int32_t>(s));
  else if (bits == 16) append(out, static_cast<int16_t>(s));
  else out->push_back(static_cast<char>(static_cast<uint8_t>(s)));
}

// Flattens (possibly nested) `data` into `out`, counting elements; refuses more than `numel`.
void flatten_data(const json& data, Datatype type, const std::string& tensor, int depth, int max_depth, int64_t numel,
                  int64_t* count, std::string* out) {
  if (depth > max_depth)
    fail(tensor, "data", "nested deeper than the shape's rank allows (" + std::to_string(max_depth) + ")");
  for (const json& v : data) {
    if (v.is_array()) {
      flatten_data(v, type, tensor, depth + 1, max_depth, numel, count, out);
      continue;
    }
    if (*count >= numel) fail(tensor, "data", "holds more elements than the shape's " + std::to_string(numel));
    append_element(v, type, tensor, out);
    ++*count;
  }
}

std::vector<int64_t> read_shape(const json& v, const std::string& tensor) {
  if (!v.is_array()) fail(tensor, "shape", std::string("must be an array of integers, got a ") + json_type(v));
  if (v.size() > 64) fail(tensor, "shape", "has " + std::to_string(v.size()) + " dimensions (at most 64)");
  std::vector<int64_t> shape;
  for (const json& d : v) {
    if (d.is_number_unsigned()) {
      if (d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(tensor, "shape", "dimension " + d.dump() + " is too large");
      shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    } else if (d.is_number_integer()) {
      fail(tensor, "shape", "dimension " + d.dump() + " is negative");
    } else {
      fail(tensor, "shape", "dimension " + d.dump() + " is not an integer");
    }
  }
  return shape;
}

// A parameters object: values must be strings, numbers or booleans.
void check_parameters(const json& p, const std::string& tensor, const std::string& field) {
  if (!p.is_object()) fail(tensor, field, std::string("must be an object, got a ") + json_type(p));
  for (auto it = p.begin(); it != p.end(); ++it)
    if (!it.value().is_string() && !it.value().is_number() && !it.value().is_boolean())
      fail(tensor, field, "parameter '" + it.key() + "' must be a string, number or boolean");
}

bool bool_parameter(const json& p, const char* key, const std::string& tensor, const std::string& field, bool* out) {
  auto it = p.find(key);
  if (it == p.end()) return false;
  if (!it->is_boolean()) fail(tensor, field, std::string("parameter '") + key + "' must be a boolean");
  *out = it->get<bool>();
  return true;
}

int64_t parse_header_length(const std::string& text, size_t body_size) {
  if (text.empty() || text.size() > 19)
    fail("", "Inference-Header-Content-Length", "'" + text + "' is not a byte count");
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') fail("", "Inference-Header-Content-Length", "'" + text + "' is not a byte count");
    v = v * 10 + (c - '0');
  }
  if (static_cast<uint64_t>(v) > body_size)
    fail("", "Inference-Header-Content-Length",
         std::to_string(v) + " is longer than the body (" + std::to_string(body_size) + " bytes)");
  return v;
}

}  // namespace

void check_tensor_bytes(const std::string& tensor, Datatype type, const std::vector<int64_t>& shape, const char* data,
                        size_t size) {
  int64_t numel = 0;
  if (!checked_numel(shape, &numel)) fail(tensor, "shape", "element count of " + shape_text(shape) + " overflows");
  if (type != Datatype::kBytes) {
    const int64_t elem = static_cast<int64_t>(datatype_size(type));
    if (numel > std::numeric_limits<int64_t>::max() / elem)
      fail(tensor, "shape", "byte size of " + shape_text(shape) + " overflows");
    const uint64_t want = static_cast<uint64_t>(numel * elem);
    if (size != want)
      fail(tensor, "data", std::to_string(size) + " bytes of data, shape " + shape_text(shape) + " of " +
                               datatype_name(type) + " needs " + std::to_string(want));
    return;
  }
  size_t pos = 0;
  int64_t count = 0;
  while (pos < size) {
    if (size - pos < 4) fail(tensor, "data", "BYTES element " + std::to_string(count) + " has a truncated length");
    uint32_t len = 0;
    std::memcpy(&len, data + pos, 4);
    pos += 4;
    if (len > size - pos)
      fail(tensor, "data", "BYTES element " + std::to_string(count) + " claims " + std::to_string(len) +
                               " bytes, " + std::to_string(size - pos) + " remain");
    pos += len;
    ++count;
  }
  if (count != numel)
    fail(tensor, "data", std::to_string(count) + " BYTES elements, shape " + shape_text(shape) + " needs " +
                             std::to_string(numel));
}

InferRequest decode_rest_request(const char* body, size_t size, const std::string* header_length,
                                 const DecodeLimits& limits) {
  size_t json_size = size;
  if (header_length) {
    json_size = static_cast<size_t>(parse_header_length(*header_length, size));
    if (json_size == 0)
      fail("", "Inference-Header-Content-Length",
           "0 (a raw binary request without a JSON header) is not supported; send the JSON header",
           ErrorKind::kUnsupported);
  }
  // Tensor data streams straight into tensor bytes while the parser reads it, when the
  // input's datatype came before its "data" (as clients write it): the document tree then
  // holds no element of it, which for large tensors is most of the parse's time and memory.
  // Data that comes first stays in the tree and is converted after the parse.
  struct Streamed {
    bool active = false;
    Datatype datatype = Datatype::kFp32;
    std::string bytes;
    int64_t count = 0;
    int max_depth = 0;
    int data_keys = 0;
  };
  std::vector<Streamed> streamed;
  bool in_inputs = false;
  std::string root_key, input_key, input_name;
  bool have_type = false;
  Datatype input_type = Datatype::kFp32;
  int data_state = 0;  // 1: "data" key seen, 2: inside its array
  int nesting = 0;
  int inputs_keys = 0;
  auto tensor_label = [&] { return input_name.empty() ? "input " + std::to_string(streamed.size() - 1) : input_name; };
  auto on_event = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    using E = json::parse_event_t;
    if (data_state == 2) {
      Streamed& st = streamed.back();
      if (event == E::value) {
        append_element(parsed, st.datatype, tensor_label(), &st.bytes);
        ++st.count;
        return false;
      }
      if (event == E::array_start) {
        st.max_depth = std::max(st.max_depth, ++nesting);
        return true;
      }
      if (event == E::array_end) {
        if (--nesting > 0) return false;  // an emptied inner array: nothing to keep
        data_state = 0;
        return true;  // the (empty) data array itself stays, so "data" is present
      }
      return true;  // objects inside data: kept for the walk below to refuse
    }
    if (event == E::key) {
      if (depth == 1) {
        root_key = parsed.get<std::string>();
        // The tree keeps the last of repeated keys; streamed data must belong to that one.
        if (root_key == "inputs" && ++inputs_keys > 1) fail("", "inputs", "given twice");
      }
      if (depth == 3 && in_inputs) {
        input_key = parsed.get<std::string>();
        if (input_key == "data") {
          if (++streamed.back().data_keys > 1) fail(tensor_label(), "data", "given twice");
          data_state = 1;
        }
      }
      return true;
    }
    if (depth == 1 && event == E::array_start && root_key == "inputs") in_inputs = true;
    if (depth == 1 && event == E::array_end) in_inputs = false;
    if (depth == 2 && in_inputs && (event == E::object_start || event == E::array_start || event == E::value)) {
      streamed.emplace_back();
      input_name.clear();
      input_key.clear();
      have_type = false;
      data_state = 0;
    }
    if (depth == 3 && in_inputs && event == E::value) {
      if (input_key == "name" && parsed.is_string()) input_name = parsed.get<std::string>();
      if (input_key == "datatype" && parsed.is_string())
        have_type = datatype_from_name(parsed.get<std::string>(), &input_type);
      if (data_state == 1) data_state = 0;  // "data" that is not an array: the walk refuses it
    }
    if (depth == 3 && in_inputs && event == E::array_start && data_state == 1) {
      data_state = 0;
      if (have_type) {
        Streamed& st = streamed.back();
        st.active = true;
        st.datatype = input_type;
        st.max_depth = nesting = 1;
        data_state = 2;
      }
    }
    return true;
  };
  json root;
  try {
    root = json::parse(body, body + json_size, on_event);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers beyond double
    std::string what = e.what();
    const size_t colon = what.find("parse error");
    fail("", "body", "malformed JSON: " + (colon == std::string::npos ? what : what.substr(colon)));
  }
  if (!root.is_object()) fail("", "body", std::string("must be a JSON object, got a ") + json_type(root));

  InferRequest req;
  if (auto it = root.find("id"); it != root.end()) {
    if (!it->is_string()) fail("", "id", std::string("must be a string, got a ") + json_type(*it));
    req.has_id = true;
    req.id = it->get<std::string>();
  }
  if (auto it = root.find("parameters"); it != root.end()) {
    check_parameters(*it, "", "parameters");
    bool_parameter(*it, "binary_data_output", "", "parameters", &req.binary_output);
    if (auto t = it->find("timeout"); t != it->end()) {
      if (!t->is_number_integer() || t->get<int64_t>() < 0)
        fail("", "parameters", "parameter 'timeout' must be a non-negative integer (microseconds)");
      req.timeout_us = t->get<int64_t>();
    }
  }
  auto inputs = root.find("inputs");
  if (inputs == root.end()) fail("", "inputs", "missing");
  if (!inputs->is_array()) fail("", "inputs", std::string("must be an array, got a ") + json_type(*inputs));
  if (inputs->size() > limits.max_inputs) fail("", "inputs", "too many inputs (" + std::to_string(inputs->size()) + ")");

  const char* binary = body + json_size;
  const size_t binary_size = size - json_size;
  size_t binary_used = 0;
  size_t index = 0;
  for (const json& in : *inputs) {
    const Streamed* st = index < streamed.size() && streamed[index].active ? &streamed[index] : nullptr;
    ++index;
    if (!in.is_object()) fail("", "inputs", std::string("each input must be an object, got a ") + json_type(in));
    InputTensor t;
    auto name = in.find("name");
    if (name == in.end() || !name->is_string()) fail("", "name", "each input needs a string \"name\"");
    t.name = name->get<std::string>();
    for (const InputTensor& other : req.inputs)
      if (other.name == t.name) fail(t.name, "name", "input given twice");
    auto dt = in.find("datatype");
    if (dt == in.end() || !dt->is_string()) fail(t.name, "datatype", "missing or not a string");
    if (!datatype_from_name(dt->get<std::string>(), &t.datatype))
      fail(t.name, "datatype", "'" + dt->get<std::string>() + "' is not a protocol datatype");
    auto shape = in.find("shape");
    if (shape == in.end()) fail(t.name, "shape", "missing");
    t.shape = read_shape(*shape, t.name);
    int64_t numel = 0;
    if (!checked_numel(t.shape, &numel)) fail(t.name, "shape", "element count of " + shape_text(t.shape) + " overflows");

    int64_t binary_data_size = -1;
    if (auto p = in.find("parameters"); p != in.end()) {
      check_parameters(*p, t.name, "parameters");
      if (p->contains("shared_memory_region"))
        fail(t.name, "parameters", "shared memory inputs are not supported", ErrorKind::kUnsupported);
      if (auto b = p->find("binary_data_size"); b != p->end()) {
        if (!b->is_number_integer() || b->get<int64_t>() < 0)
          fail(t.name, "binary_data_size", "must be a non-negative integer");
        binary_data_size = b->get<int64_t>();
      }
    }
    auto data = in.find("data");
    if (binary_data_size >= 0) {
      if (data != in.end()) fail(t.name, "data", "given together with binary_data_size");
      if (!header_length)
        fail(t.name, "binary_data_size",
             "binary data declared but the Inference-Header-Content-Length header is missing");
      if (static_cast<uint64_t>(binary_data_size) > binary_size - binary_used)
        fail(t.name, "binary_data_size",
             std::to_string(binary_data_size) + " bytes declared, only " + std::to_string(binary_size - binary_used) +
                 " bytes of binary data remain");
      t.view = binary + binary_used;
      t.view_size = static_cast<size_t>(binary_data_size);
      binary_used += t.view_size;
      check_tensor_bytes(t.name, t.datatype, t.shape, t.view, t.view_size);
    } else {
      if (data == in.end()) fail(t.name, "data", "missing (and no binary_data_size parameter)");
      if (!data->is_array()) fail(t.name, "data", std::string("must be an array, got a ") + json_type(*data));
      int64_t count = 0;
      const int max_depth = std::min<int>(limits.max_data_depth, std::max<int>(1, static_cast<int>(t.shape.size())));
      if (st) {
        // A repeated "datatype" key could differ from the one the data streamed as.
        if (st->datatype != t.datatype) fail(t.name, "datatype", "given twice with different values");
        if (st->max_depth > max_depth)
          fail(t.name, "data", "nested deeper than the shape's rank allows (" + std::to_string(max_depth) + ")");
        if (!data->empty()) fail(t.name, "data", "holds an object");
        if (st->count > numel) fail(t.name, "data", "holds more elements than the shape's " + std::to_string(numel));
        count = st->count;
        t.decoded = std::move(streamed[index - 1].bytes);
      } else {
        flatten_data(*data, t.datatype, t.name, 1, max_depth, numel, &count, &t.decoded);
      }
      if (count != numel)
        fail(t.name, "data", "holds " + std::to_string(count) + " elements, shape " + shape_text(t.shape) + " needs " +
                                 std::to_string(numel));
    }
    req.inputs.push_back(std::move(t));
  }
  if (binary_used != binary_size)
    fail("", "Inference-Header-Content-Length",
         std::to_string(binary_size) + " bytes follow the JSON header but the inputs declare " +
             std::to_string(binary_used));

  if (auto outs = root.find("outputs"); outs != root.end()) {
    if (!outs->is_array()) fail("", "outputs", std::string("must be an array, got a ") + json_type(*outs));
    for (const json& o : *outs) {
      if (!o.is_object()) fail("", "outputs", "each requested output must be an object");
      auto name = o.find("name");
      if (name == o.end() || !name->is_string()) fail("", "outputs", "each requested output needs a string \"name\"");
      RequestedOutput r;
      r.name = name->get<std::string>();
      for (const RequestedOutput& other : req.outputs)
        if (other.name == r.name) fail(r.name, "outputs", "output requested twice");
      if (auto p = o.find("parameters"); p != o.end()) {
        check_parameters(*p, r.name, "parameters");
        if (p->contains("classification"))
          fail(r.name, "parameters", "classification outputs are not supported", ErrorKind::kUnsupported);
        if (p->contains("shared_memory_region"))
          fail(r.name, "parameters", "shared memory outputs are not supported", ErrorKind::kUnsupported);
        bool b = false;
        if (bool_parameter(*p, "binary_data", r.name, "parameters", &b)) r.binary = b ? 1 : 0;
      }
      req.outputs.push_back(std::move(r));
    }
  }
  return req;
}

namespace {
json parse_small_body(const std::string& body, const char* what) {
  try {
    json root = json::parse(body);
    if (!root.is_object()) fail("", "body", std::string(what) + " must be a JSON object");
    return root;
  } catch (const json::exception& e) {
    fail("", "body", std::string("malformed JSON in the ") + what + ": " + e.what());
  }
}
}  // namespace

bool decode_index_request(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return false;
  const json root = parse_small_body(body, "index request");
  bool ready = false;
  if (auto it = root.find("ready"); it != root.end()) {
    if (!it->is_boolean()) fail("", "ready", "must be a boolean");
    ready = it->get<bool>();
  }
  return ready;
}

void check_load_request(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return;
  const json root = parse_small_body(body, "load request");
  if (auto p = root.find("parameters"); p != root.end()) {
    check_parameters(*p, "", "parameters");
    for (auto it = p->begin(); it != p->end(); ++it)
      if (it.key() == "config" || it.key().compare(0, 5, "file:") == 0)
        fail("", "parameters", "load parameter '" + it.key() + "' is not supported: the model loads from the repository",
             ErrorKind::kUnsupported);
  }
}

}  // namespace graphrt_serve
