#include "npy.h"
#include "output_file.h"

#include <algorithm>
#include <cstring>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/regular_file.h"

namespace graphrt_apps {

using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::operator==;

int64_t NpyArray::numel() const { return graphrt::shape_numel(shape.data(), static_cast<int>(shape.size())); }

std::string npy_descr(DLDataType t) {
  if (t.lanes != 1) throw Error("cannot store vector dtype " + graphrt::dtype_to_string(t) + " in .npy");
  if (t.code == kDLUInt && t.bits == 1) return "|b1";
  const char* kind = nullptr;
  switch (t.code) {
    case kDLInt: kind = "i"; break;
    case kDLUInt: kind = "u"; break;
    case kDLFloat: kind = "f"; break;
    case kDLBfloat:  // numpy has no bfloat16: its bits as uint16, what TVM's NDArray.numpy() gives
      if (t.bits == 16) return "<u2";
      throw Error("cannot store dtype " + graphrt::dtype_to_string(t) + " in .npy");
    default: throw Error("cannot store dtype " + graphrt::dtype_to_string(t) + " in .npy");
  }
  // int4, uint4, int1: one byte per element, as TVM stores them.
  if ((t.code == kDLInt || t.code == kDLUInt) && t.bits < 8) return std::string("|") + kind + "1";
  if (t.bits % 8 != 0 || t.bits == 0 || t.bits > 64)
    throw Error("cannot store dtype " + graphrt::dtype_to_string(t) + " in .npy");
  return std::string(t.bits == 8 ? "|" : "<") + kind + std::to_string(t.bits / 8);
}

DLDataType dtype_from_npy_descr(const std::string& descr, const std::string& file) {
  if (descr == "|b1" || descr == "b1" || descr == "?") return DLDataType{kDLUInt, 1, 1};
  if (descr.size() < 3) throw Error("unsupported .npy dtype '" + descr + "'").with("file", file);
  char order = descr[0], kind = descr[1];
  if (order == '>') throw Error("big-endian .npy data ('" + descr + "') is not supported").with("file", file);
  if (order != '<' && order != '|' && order != '=')
    throw Error("unsupported .npy dtype '" + descr + "'").with("file", file);
  int bytes = 0;
  try {
    bytes = std::stoi(descr.substr(2));
  } catch (...) {
    throw Error("unsupported .npy dtype '" + descr + "'").with("file", file);
  }
  uint8_t code;
  if (kind == 'f') {
    code = kDLFloat;
    if (bytes != 2 && bytes != 4 && bytes != 8) throw Error("unsupported .npy dtype '" + descr + "'").with("file", file);
  } else if (kind == 'i') {
    code = kDLInt;
  } else if (kind == 'u') {
    code = kDLUInt;
  } else {
    throw Error("unsupported .npy dtype '" + descr + "' (use float, int or uint arrays)").with("file", file);
  }
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
    throw Error("unsupported .npy dtype '" + descr + "'").with("file", file);
  return DLDataType{code, static_cast<uint8_t>(bytes * 8), 1};
}

namespace {

// The header dict numpy writes, {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), },
// read strictly: numpy reads it as a Python literal, where a repeated key
// silently takes its last value, so anything but the three keys, each once,
// with a string, a bool and a tuple of integers, could be read one way here
// and another way by numpy. Such headers are refused.
class NpyHeaderParser {
 public:
  NpyHeaderParser(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  void parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_space();
    expect('{');
    skip_space();
    while (peek() != '}') {
      const std::string key = quoted_string("key");
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        once(&seen_descr, key);
        if (peek() != '\'' && peek() != '"') fail("'descr' is not a dtype string (structured arrays are not supported)");
        *descr = quoted_string("'descr'");
      } else if (key == "fortran_order") {
        once(&seen_fortran, key);
        *fortran = boolean();
      } else if (key == "shape") {
        once(&seen_shape, key);
        *shape = int_tuple();
      } else {
        fail("unexpected key '" + key + "' (numpy writes only descr, fortran_order and shape)");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        fail("expected ',' or '}' at offset " + std::to_string(pos_));
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("text after the header dict at offset " + std::to_string(pos_));
    if (!seen_descr || !seen_fortran || !seen_shape)
      fail(std::string("no '") + (!seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape") + "' key");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw Error("bad .npy header: " + why).with("file", file_); }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
    ++pos_;
  }
  void once(bool* seen, const std::string& key) const {
    if (*seen) fail("key '" + key + "' appears twice (numpy would read the last one)");
    *seen = true;
  }
  std::string quoted_string(const char* what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(std::string("expected a quoted ") + what + " at offset " + std::to_string(pos_));
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) fail(std::string("unterminated ") + what);
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    if (value.find('\\') != std::string::npos) fail(std::string("escape sequence in ") + what);
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    if (text_.compare(pos_, 4, "True") == 0) return pos_ += 4, true;
    if (text_.compare(pos_, 5, "False") == 0) return pos_ += 5, false;
    fail("'fortran_order' is not True or False");
  }
  std::vector<int64_t> int_tuple() {
    std::vector<int64_t> dims;
    expect('(');
    skip_space();
    while (peek() != ')') {
      const size_t start = pos_;
      while (peek() >= '0' && peek() <= '9') ++pos_;
      if (pos_ == start) fail("'shape' holds something other than non-negative integers");
      if (pos_ - start > 18) fail("'shape' dimension too large");
      dims.push_back(std::stoll(text_.substr(start, pos_ - start)));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        fail("'shape' is not a tuple of integers");
      }
    }
    ++pos_;
    return dims;
  }

  const std::string& text_;
  const std::string& file_;
  size_t pos_ = 0;
};

// A header read from the file's first bytes: the array's dtype and shape,
// and where its data starts.
struct NpyHeader {
  NpyArray array;  // data left empty
  size_t data_offset = 0;
  size_t data_bytes = 0;
};

// Numpy's own readers refuse headers past 10000 bytes by default; graphrt
// allows more, but bounds what one header can cost.
constexpr size_t kMaxNpyHeaderBytes = 65536;

NpyHeader parse_npy_header(const char* bytes, size_t size, const std::string& path) {
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0) throw Error("not a .npy file (bad magic)").with("file", path);
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) throw Error("truncated .npy header").with("file", path);
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    throw Error(ErrorKind::kUnsupported, "unsupported .npy version " + std::to_string(major)).with("file", path);
  }
  if (header_len > kMaxNpyHeaderBytes)
    throw Error("bad .npy header: " + std::to_string(header_len) + " bytes long").with("file", path);
  if (header_len > size - header_start) throw Error("truncated .npy header").with("file", path);
  const std::string text(bytes + header_start, header_len);
  NpyHeader h;
  std::string descr;
  bool fortran = false;
  NpyHeaderParser(text, path).parse(&descr, &fortran, &h.array.shape);
  h.array.dtype = dtype_from_npy_descr(descr, path);
  if (fortran)
    throw Error("Fortran-order .npy arrays are not supported (save with numpy.ascontiguousarray)").with("file", path);
  try {
    h.data_bytes = graphrt::dtype_bytes(h.array.dtype, h.array.numel());
  } catch (Error& e) {
    throw e.with("file", path);
  }
  h.data_offset = header_start + header_len;
  return h;
}

Error truncated_data(const NpyHeader& h, size_t have, const std::string& path) {
  return Error("truncated .npy data: " + std::to_string(have) + " bytes for shape " +
               graphrt::shape_to_string(h.array.shape) + " (" + std::to_string(h.data_bytes) + " needed)")
      .with("file", path);
}

// The array in a whole .npy file's bytes (trailing bytes past the data are ignored, as numpy does).
NpyArray npy_from_bytes(const char* bytes, size_t size, const std::string& path) {
  NpyHeader h = parse_npy_header(bytes, size, path);
  const size_t have = size - std::min(size, h.data_offset);
  if (have < h.data_bytes) throw truncated_data(h, have, path);
  h.array.data.assign(bytes + h.data_offset, bytes + h.data_offset + h.data_bytes);
  return std::move(h.array);
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  const std::string bytes = graphrt::read_regular_file(path, ".npy file");
  return npy_from_bytes(bytes.data(), bytes.size(), path);
}

NpyArray parse_npy(const std::vector<char>& bytes, const std::string& path) {
  return npy_from_bytes(bytes.data(), bytes.size(), path);
}

NpyArray parse_npy(const char* data, size_t size, const std::string& path) { return npy_from_bytes(data, size, path); }

bool npy_dtype_fits(DLDataType npy, DLDataType want) {
  if (npy == want) return true;
  if (want.lanes != 1) return false;
  // numpy has no bfloat16: a uint16 .npy holds its bit patterns (what TVM's NDArray.numpy() gives).
  if (want.code == kDLBfloat && want.bits == 16) return npy == DLDataType{kDLUInt, 16, 1};
  // int4, uint4, int1 ... take one byte per element in TVM's tensors: an int8
  // or uint8 .npy of the same signedness holds them as they are stored.
  const bool sub_byte_int = (want.code == kDLInt || want.code == kDLUInt) && want.bits < 8 &&
                            !(want.code == kDLUInt && want.bits == 1);
  return sub_byte_int && npy.code == want.code && npy.bits == 8 && npy.lanes == 1;
}

std::string encode_npy(DLDataType dtype, const std::vector<int64_t>& shape, const void* data, size_t nbytes) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header = "{'descr': '" + npy_descr(dtype) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  bytes += static_cast<char>(len & 0xFF);
  bytes += static_cast<char>(len >> 8);
  bytes += header;
  bytes.append(static_cast<const char*>(data), nbytes);
  return bytes;
}

void write_npy(const std::string& path, DLDataType dtype, const std::vector<int64_t>& shape, const void* data,
               size_t nbytes) {
  write_output_file(path, encode_npy(dtype, shape, data, nbytes), ".npy file");
}

}  // namespace graphrt_apps
