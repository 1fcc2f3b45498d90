#include "protocol/infer_request.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "graphrt/error.h"
#include "graphrt/float16.h"
#include "graphrt/json_reader.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::JsonReader;
using graphrt::JsonType;

namespace {

[[noreturn]] void fail(const std::string& tensor, const std::string& field, const std::string& message,
                       ErrorKind kind = ErrorKind::kInvalidArgument) {
  Error e(kind, message);
  if (!tensor.empty()) e.with("tensor", tensor);
  e.with("field", field);
  throw e;
}

// Skips a value that is not what `field` needs and refuses it by its type.
[[noreturn]] void refuse_type(JsonReader& r, const std::string& tensor, const std::string& field, const char* want) {
  const JsonType t = r.next_type();
  r.skip_value();  // malformed text is reported as such, not as a wrong type
  fail(tensor, field, std::string(want) + ", got a " + graphrt::json_type_name(t));
}

// Tensor bytes written in place: a string sized ahead (grown by doubling when the shape was not
// known), each element copied to the end of what is used, cut to that at the end.
class ByteSink {
 public:
  void presize(size_t n) { bytes_.resize(n); }
  char* room(size_t n) {
    if (bytes_.size() - used_ < n) bytes_.resize(std::max(bytes_.size() * 2, used_ + n));
    char* p = &bytes_[used_];
    used_ += n;
    return p;
  }
  std::string take() {
    bytes_.resize(used_);
    return std::move(bytes_);
  }

 private:
  std::string bytes_;
  size_t used_ = 0;
};

template <typename T>
void append(ByteSink* out, T value) {
  std::memcpy(out->room(sizeof(T)), &value, sizeof(T));  // little-endian host
}

bool is_integer_text(const std::string& text) {
  return !text.empty() && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9')) &&
         text.find_first_of(".eE") == std::string::npos;
}

// An integer element that is not one `type` holds: why, from its text.
[[noreturn]] void refuse_integer(JsonReader& r, Datatype type, const std::string& tensor) {
  const JsonType t = r.next_type();
  const std::string text = r.raw_value();
  const std::string shown = graphrt::quote_untrusted(text, 40);
  const bool is_unsigned = type == Datatype::kUint8 || type == Datatype::kUint16 || type == Datatype::kUint32 ||
                           type == Datatype::kUint64;
  if (is_integer_text(text) && is_unsigned && text[0] == '-')
    fail(tensor, "data", "element " + shown + " is negative, " + datatype_name(type) + " is unsigned");
  if (is_integer_text(text)) fail(tensor, "data", "element " + shown + " is out of range for " + datatype_name(type));
  fail(tensor, "data", "element " + shown + " is a " + graphrt::json_type_name(t) + ", " + datatype_name(type) + " needs an integer");
}

template <typename T>
void append_integer(JsonReader& r, Datatype type, const std::string& tensor, ByteSink* out) {
  if (std::numeric_limits<T>::is_signed) {
    int64_t v = 0;
    if (!r.read_integer(&v)) refuse_integer(r, type, tensor);
    if (v < int64_t(std::numeric_limits<T>::min()) || v > int64_t(std::numeric_limits<T>::max()))
      fail(tensor, "data", "element " + std::to_string(v) + " is out of range for " + datatype_name(type));
    append(out, static_cast<T>(v));
  } else {
    uint64_t v = 0;
    if (!r.read_unsigned(&v)) refuse_integer(r, type, tensor);
    if (v > uint64_t(std::numeric_limits<T>::max()))
      fail(tensor, "data", "element " + std::to_string(v) + " is out of range for " + datatype_name(type));
    append(out, static_cast<T>(v));
  }
}

// A number element, as the nearest double and then `type` (what clients' JSON libraries do).
void append_float(JsonReader& r, Datatype type, const std::string& tensor, ByteSink* out) {
  if (!r.next_is_number()) {
    const JsonType t = r.next_type();
    fail(tensor, "data", "element " + graphrt::quote_untrusted(r.raw_value(), 40) + " is a " + graphrt::json_type_name(t) +
                             ", not a number");
  }
  const double d = r.read_double();
  if (type == Datatype::kFp32) append(out, static_cast<float>(d));
  else if (type == Datatype::kFp64) append(out, d);
  else if (type == Datatype::kFp16) append(out, graphrt::float16_from_double(d));
  else append(out, graphrt::bfloat16_from_double(d));
}

// One JSON element as `type`, appended to `out`.
void append_element(JsonReader& r, Datatype type, const std::string& tensor, ByteSink* out) {
  switch (type) {
    case Datatype::kFp16: case Datatype::kBf16: case Datatype::kFp32: case Datatype::kFp64:
      return append_float(r, type, tensor, out);
    case Datatype::kBool: {
      const char c = r.peek();
      if (c != 't' && c != 'f') {
        const JsonType t = r.next_type();
        fail(tensor, "data", "element " + graphrt::quote_untrusted(r.raw_value(), 40) + " is a " + graphrt::json_type_name(t) +
                                 ", BOOL needs true or false");
      }
      *out->room(1) = r.read_bool() ? 1 : 0;
      return;
    }
    case Datatype::kBytes: {
      if (!r.next_is_string()) {
        const JsonType t = r.next_type();
        fail(tensor, "data", "element " + graphrt::quote_untrusted(r.raw_value(), 40) + " is a " + graphrt::json_type_name(t) +
                                 ", BYTES needs a string");
      }
      const std::string s = r.read_string();
      if (s.size() > std::numeric_limits<uint32_t>::max()) fail(tensor, "data", "an element is longer than 2^32 bytes");
      append(out, static_cast<uint32_t>(s.size()));
      if (!s.empty()) std::memcpy(out->room(s.size()), s.data(), s.size());
      return;
    }
    case Datatype::kUint8: return append_integer<uint8_t>(r, type, tensor, out);
    case Datatype::kUint16: return append_integer<uint16_t>(r, type, tensor, out);
    case Datatype::kUint32: return append_integer<uint32_t>(r, type, tensor, out);
    case Datatype::kUint64: return append_integer<uint64_t>(r, type, tensor, out);
    case Datatype::kInt8: return append_integer<int8_t>(r, type, tensor, out);
    case Datatype::kInt16: return append_integer<int16_t>(r, type, tensor, out);
    case Datatype::kInt32: return append_integer<int32_t>(r, type, tensor, out);
    case Datatype::kInt64: return append_integer<int64_t>(r, type, tensor, out);
  }
  fail(tensor, "datatype", std::string("has no JSON form: ") + datatype_name(type));
}

// A "data" array's elements, nested or flat, read straight into tensor bytes.
struct DataRead {
  Datatype type;
  std::string tensor;
  int max_depth;      // nesting allowed
  int64_t max_count;  // elements allowed (the shape's count, or unbounded while it is unknown)
  ByteSink bytes;
  int64_t count = 0;
  int depth_seen = 1;
};

void read_data_array(JsonReader& r, DataRead& d, int depth) {
  if (depth > d.max_depth)
    fail(d.tensor, "data", "nested deeper than the shape's rank allows (" + std::to_string(d.max_depth) + ")");
  d.depth_seen = std::max(d.depth_seen, depth);
  r.array([&](size_t) {
    if (r.next_is_array()) return read_data_array(r, d, depth + 1);
    if (d.count >= d.max_count)
      fail(d.tensor, "data", "holds more elements than the shape's " + std::to_string(d.max_count));
    append_element(r, d.type, d.tensor, &d.bytes);
    ++d.count;
  });
}

std::vector<int64_t> read_shape(JsonReader& r, const std::string& tensor) {
  if (!r.next_is_array()) refuse_type(r, tensor, "shape", "must be an array of integers");
  std::vector<int64_t> shape;
  r.array([&](size_t i) {
    if (i >= 64) fail(tensor, "shape", "has more than 64 dimensions");
    uint64_t v = 0;
    if (r.read_unsigned(&v)) {
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(tensor, "shape", "dimension " + std::to_string(v) + " is too large");
      shape.push_back(static_cast<int64_t>(v));
      return;
    }
    const std::string text = r.raw_value();
    const std::string shown = graphrt::quote_untrusted(text, 40);
    if (is_integer_text(text) && text[0] == '-') fail(tensor, "shape", "dimension " + shown + " is negative");
    if (is_integer_text(text)) fail(tensor, "shape", "dimension " + shown + " is too large");
    fail(tensor, "shape", "dimension " + shown + " is not an integer");
  });
  return shape;
}

// A parameters object: values must be strings, numbers or booleans. `special(key)` reads the
// value of a parameter it knows and returns true, or returns false to have it checked and skipped.
template <typename Special>
void read_parameters(JsonReader& r, const std::string& tensor, const std::string& field, Special special) {
  if (!r.next_is_object()) refuse_type(r, tensor, field, "must be an object");
  r.object_unique_keys([&](std::string_view key) {
    if (special(key)) return;
    const JsonType t = r.next_type();
    if (t != JsonType::kString && t != JsonType::kNumber && t != JsonType::kBool)
      fail(tensor, field, "parameter " + graphrt::quote_untrusted(std::string(key), 40) +
                              " must be a string, number or boolean");
    r.skip_value();
  });
}

bool read_bool_parameter(JsonReader& r, const char* key, const std::string& tensor, const std::string& field) {
  if (r.next_type() != JsonType::kBool) fail(tensor, field, std::string("parameter '") + key + "' must be a boolean");
  return r.read_bool();
}

// A non-negative integer parameter.
int64_t read_count_parameter(JsonReader& r, const std::string& tensor, const std::string& field,
                             const std::string& message) {
  int64_t v = 0;
  if (!r.read_integer(&v)) r.skip_value();
  else if (v >= 0) return v;
  fail(tensor, field, message);
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

namespace {

// What one input object said, read in one pass: "shape" and "parameters" are re-read (rewind)
// once the name is known, for messages that name the tensor; "data" streams straight into
// tensor bytes when the datatype came before it (as clients write it), else it is re-read then.
struct InputFields {
  bool has_name = false, has_datatype = false;
  std::string name, datatype_text;
  Datatype datatype = Datatype::kFp32;
  bool datatype_known = false;
  size_t shape_at = 0, parameters_at = 0, data_at = 0;
  bool has_shape = false, has_parameters = false, has_data = false;
  bool data_streamed = false;
  int64_t early_numel = -1;  // the shape's element count when it came before "data" and is plain
  DataRead streamed{Datatype::kFp32, "", 0, 0, {}, 0, 1};
};

// A rough cap for reserving tensor bytes before the elements are read: each element takes at
// least two bytes of JSON text, so a shape that claims more than that is not trusted for memory.
size_t reserve_for(int64_t numel, size_t element_size, size_t json_size) {
  const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(numel), json_size / 2 + 1);
  return static_cast<size_t>(n * element_size);
}

// The element count of the shape that comes next, when it is an array of dimensions in range
// (-1 otherwise), for reserving tensor bytes before the data streams; the shape is checked
// with messages naming its tensor later, read again. Leaves the cursor after the shape.
int64_t numel_if_plain(JsonReader& r) {
  const size_t at = (r.peek(), r.offset());
  std::vector<int64_t> dims;
  bool plain = r.consume('[');
  if (plain && !r.consume(']')) {
    do {
      uint64_t v = 0;
      plain = dims.size() < 64 && r.read_unsigned(&v) && v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      if (plain) dims.push_back(static_cast<int64_t>(v));
    } while (plain && r.consume(','));
    plain = plain && r.consume(']');
  }
  r.rewind(at);
  r.skip_value();
  int64_t numel = -1;
  return plain && checked_numel(dims, &numel) ? numel : -1;
}

class RestDecoder {
 public:
  RestDecoder(const char* body, size_t size, const std::string* header_length, const DecodeLimits& limits)
      : header_length_(header_length), limits_(limits), json_size_(json_length(size, header_length)),
        reader_(std::string_view(body, json_size_), graphrt::JsonLimits{json_size_, 4 + limits.max_data_depth},
                "the request body"),
        binary_(body + json_size_), binary_size_(size - json_size_) {}

  InferRequest decode() {
    JsonReader& r = reader_;
    if (!r.next_is_object()) refuse_type(r, "", "body", "must be a JSON object");
    bool has_inputs = false;
    r.object_unique_keys([&](std::string_view key) {
      if (key == "id") {
        if (!r.next_is_string()) refuse_type(r, "", "id", "must be a string");
        req_.has_id = true;
        req_.id = r.read_string();
      } else if (key == "parameters") {
        read_request_parameters();
      } else if (key == "inputs") {
        has_inputs = true;
        read_inputs();
      } else if (key == "outputs") {
        read_outputs();
      } else {
        r.skip_value();
      }
    });
    r.expect_end();
    if (!has_inputs) fail("", "inputs", "missing");
    if (binary_used_ != binary_size_)
      fail("", "Inference-Header-Content-Length",
           std::to_string(binary_size_) + " bytes follow the JSON header but the inputs declare " +
               std::to_string(binary_used_));
    return std::move(req_);
  }

 private:
  static size_t json_length(size_t size, const std::string* header_length);

  void read_request_parameters() {
    read_parameters(reader_, "", "parameters", [&](std::string_view key) {
      if (key == "binary_data_output") {
        req_.binary_output = read_bool_parameter(reader_, "binary_data_output", "", "parameters");
      } else if (key == "timeout") {
        req_.timeout_us = read_count_parameter(reader_, "", "parameters",
                                               "parameter 'timeout' must be a non-negative integer (microseconds)");
      } else {
        return false;
      }
      return true;
    });
  }

  void read_inputs() {
    JsonReader& r = reader_;
    if (!r.next_is_array()) refuse_type(r, "", "inputs", "must be an array");
    r.array([&](size_t i) {
      if (i >= limits_.max_inputs) fail("", "inputs", "too many inputs (more than " + std::to_string(limits_.max_inputs) + ")");
      if (!r.next_is_object()) refuse_type(r, "", "inputs", "each input must be an object");
      req_.inputs.push_back(read_input(i));
    });
  }

  InputTensor read_input(size_t index) {
    JsonReader& r = reader_;
    InputFields f;
    r.object_unique_keys([&](std::string_view key) {
      if (key == "name") {
        f.has_name = r.next_is_string();
        if (f.has_name) f.name = r.read_string(); else r.skip_value();
      } else if (key == "datatype") {
        f.has_datatype = r.next_is_string();
        if (f.has_datatype) {
          f.datatype_text = r.read_string();
          f.datatype_known = datatype_from_name(f.datatype_text, &f.datatype);
        } else {
          r.skip_value();
        }
      } else if (key == "shape") {
        f.has_shape = true;
        f.shape_at = (r.peek(), r.offset());
        f.early_numel = numel_if_plain(r);
      } else if (key == "parameters") {
        f.has_parameters = true;
        f.parameters_at = (r.peek(), r.offset());
        r.skip_value();
      } else if (key == "data") {
        f.has_data = true;
        f.data_at = (r.peek(), r.offset());
        if (f.datatype_known && r.next_is_array()) {
          // Element errors name the input by its place when its name comes later.
          f.streamed = DataRead{f.datatype, f.has_name ? f.name : "input " + std::to_string(index),
                                limits_.max_data_depth,
                                f.early_numel >= 0 ? f.early_numel : std::numeric_limits<int64_t>::max(), {}, 0, 1};
          if (f.early_numel >= 0 && f.datatype != Datatype::kBytes)
            f.streamed.bytes.presize(reserve_for(f.early_numel, datatype_size(f.datatype), json_size_));
          read_data_array(r, f.streamed, 1);
          f.data_streamed = true;
        } else {
          r.skip_value();
        }
      } else {
        r.skip_value();
      }
    });
    const size_t end = r.offset();
    InputTensor t = check_input(f);
    r.rewind(end);
    return t;
  }

  InputTensor check_input(InputFields& f) {
    JsonReader& r = reader_;
    InputTensor t;
    if (!f.has_name) fail("", "name", "each input needs a string \"name\"");
    t.name = f.name;
    for (const InputTensor& other : req_.inputs)
      if (other.name == t.name) fail(t.name, "name", "input given twice");
    if (!f.has_datatype) fail(t.name, "datatype", "missing or not a string");
    if (!f.datatype_known)
      fail(t.name, "datatype", graphrt::quote_untrusted(f.datatype_text, 40) + " is not a protocol datatype");
    t.datatype = f.datatype;
    if (!f.has_shape) fail(t.name, "shape", "missing");
    r.rewind(f.shape_at);
    t.shape = read_shape(r, t.name);
    int64_t numel = 0;
    if (!checked_numel(t.shape, &numel)) fail(t.name, "shape", "element count of " + shape_text(t.shape) + " overflows");

    int64_t binary_data_size = -1;
    if (f.has_parameters) {
      r.rewind(f.parameters_at);
      read_parameters(r, t.name, "parameters", [&](std::string_view key) {
        if (key == "shared_memory_region")
          fail(t.name, "parameters", "shared memory inputs are not supported", ErrorKind::kUnsupported);
        if (key != "binary_data_size") return false;
        binary_data_size = read_count_parameter(r, t.name, "binary_data_size", "must be a non-negative integer");
        return true;
      });
    }
    if (binary_data_size >= 0) {
      take_binary(t, f.has_data, binary_data_size);
      return t;
    }
    if (!f.has_data) fail(t.name, "data", "missing (and no binary_data_size parameter)");
    const int max_depth = std::min<int>(limits_.max_data_depth, std::max<int>(1, static_cast<int>(t.shape.size())));
    DataRead d{t.datatype, t.name, max_depth, numel, {}, 0, 1};
    if (f.data_streamed) {
      d = std::move(f.streamed);
      if (d.depth_seen > max_depth)
        fail(t.name, "data", "nested deeper than the shape's rank allows (" + std::to_string(max_depth) + ")");
      if (d.count > numel) fail(t.name, "data", "holds more elements than the shape's " + std::to_string(numel));
    } else {
      r.rewind(f.data_at);
      if (!r.next_is_array()) refuse_type(r, t.name, "data", "must be an array");
      if (t.datatype != Datatype::kBytes) d.bytes.presize(reserve_for(numel, datatype_size(t.datatype), json_size_));
      read_data_array(r, d, 1);
    }
    if (d.count != numel)
      fail(t.name, "data", "holds " + std::to_string(d.count) + " elements, shape " + shape_text(t.shape) + " needs " +
                               std::to_string(numel));
    t.decoded = d.bytes.take();
    return t;
  }

  void take_binary(InputTensor& t, bool has_data, int64_t binary_data_size) {
    if (has_data) fail(t.name, "data", "given together with binary_data_size");
    if (!header_length_)
      fail(t.name, "binary_data_size", "binary data declared but the Inference-Header-Content-Length header is missing");
    if (static_cast<uint64_t>(binary_data_size) > binary_size_ - binary_used_)
      fail(t.name, "binary_data_size",
           std::to_string(binary_data_size) + " bytes declared, only " + std::to_string(binary_size_ - binary_used_) +
               " bytes of binary data remain");
    t.view = binary_ + binary_used_;
    t.view_size = static_cast<size_t>(binary_data_size);
    binary_used_ += t.view_size;
    check_tensor_bytes(t.name, t.datatype, t.shape, t.view, t.view_size);
  }

  void read_outputs() {
    JsonReader& r = reader_;
    if (!r.next_is_array()) refuse_type(r, "", "outputs", "must be an array");
    r.array([&](size_t) {
      if (!r.next_is_object()) {
        r.skip_value();
        fail("", "outputs", "each requested output must be an object");
      }
      RequestedOutput o;
      bool has_name = false, has_parameters = false;
      size_t parameters_at = 0;
      r.object_unique_keys([&](std::string_view key) {
        if (key == "name" && r.next_is_string()) {
          has_name = true;
          o.name = r.read_string();
          return;
        }
        if (key == "parameters") {
          has_parameters = true;
          parameters_at = (r.peek(), r.offset());
        }
        r.skip_value();
      });
      if (!has_name) fail("", "outputs", "each requested output needs a string \"name\"");
      for (const RequestedOutput& other : req_.outputs)
        if (other.name == o.name) fail(o.name, "outputs", "output requested twice");
      if (has_parameters) {
        const size_t end = r.offset();
        r.rewind(parameters_at);
        read_output_parameters(o);
        r.rewind(end);
      }
      req_.outputs.push_back(std::move(o));
    });
  }

  void read_output_parameters(RequestedOutput& o) {
    read_parameters(reader_, o.name, "parameters", [&](std::string_view key) {
      if (key == "classification")
        fail(o.name, "parameters", "classification outputs are not supported", ErrorKind::kUnsupported);
      if (key == "shared_memory_region")
        fail(o.name, "parameters", "shared memory outputs are not supported", ErrorKind::kUnsupported);
      if (key != "binary_data") return false;
      o.binary = read_bool_parameter(reader_, "binary_data", o.name, "parameters") ? 1 : 0;
      return true;
    });
  }

  const std::string* header_length_;
  const DecodeLimits& limits_;
  size_t json_size_;
  JsonReader reader_;
  const char* binary_;
  size_t binary_size_;
  size_t binary_used_ = 0;
  InferRequest req_;
};

size_t RestDecoder::json_length(size_t size, const std::string* header_length) {
  if (!header_length) return size;
  const size_t n = static_cast<size_t>(parse_header_length(*header_length, size));
  if (n == 0)
    fail("", "Inference-Header-Content-Length",
         "0 (a raw binary request without a JSON header) is not supported; send the JSON header",
         ErrorKind::kUnsupported);
  return n;
}

// The reader's own refusals (malformed text, nesting past the limit, a repeated member) are
// the body's fault, or the repeated member's.
[[noreturn]] void rethrow_as_body_error(Error& e) {
  if (e.context_value("field").empty()) {
    const std::string member = e.context_value("member");
    e.with("field", member.empty() ? "body" : member);
  }
  throw e;
}

}  // namespace

InferRequest decode_rest_request(const char* body, size_t size, const std::string* header_length,
                                 const DecodeLimits& limits) {
  try {
    return RestDecoder(body, size, header_length, limits).decode();
  } catch (Error& e) {
    rethrow_as_body_error(e);
  }
}

namespace {
// The repository extension's bodies are a few members: four levels cover any of them, deeper is refused.
constexpr graphrt::JsonLimits kSmallBodyLimits{size_t(1) << 20, 4};

template <typename Member>
void read_small_body(const std::string& body, const char* what, Member member) {
  try {
    JsonReader r(body, kSmallBodyLimits, "the request body");
    if (!r.next_is_object()) refuse_type(r, "", "body", (std::string(what) + " must be a JSON object").c_str());
    r.object_unique_keys([&](std::string_view key) { member(r, key); });
    r.expect_end();
  } catch (Error& e) {
    rethrow_as_body_error(e);
  }
}
}  // namespace

bool decode_index_request(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return false;
  bool ready = false;
  read_small_body(body, "index request", [&](JsonReader& r, std::string_view key) {
    if (key != "ready") return r.skip_value();
    if (r.next_type() != JsonType::kBool) fail("", "ready", "must be a boolean");
    ready = r.read_bool();
  });
  return ready;
}

void check_load_request(const std::string& body) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return;
  read_small_body(body, "load request", [&](JsonReader& r, std::string_view key) {
    if (key != "parameters") return r.skip_value();
    read_parameters(r, "", "parameters", [&](std::string_view name) {
      if (name == "config" || name.substr(0, 5) == "file:")
        fail("", "parameters",
             "load parameter " + graphrt::quote_untrusted(std::string(name), 40) +
                 " is not supported: the model loads from the repository",
             ErrorKind::kUnsupported);
      return false;
    });
  });
}

}  // namespace graphrt_serve
