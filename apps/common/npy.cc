#include "npy.h"
#include "output_file.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"

namespace graphrt_apps {

using graphrt::Error;

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

// Value of `key` in the header dict text ({'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }).
std::string header_value(const std::string& header, const std::string& key, const std::string& file) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) k = header.find("\"" + key + "\"");
  if (k == std::string::npos) throw Error("bad .npy header: no '" + key + "'").with("file", file);
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) throw Error("bad .npy header near '" + key + "'").with("file", file);
  size_t v = header.find_first_not_of(" ", colon + 1);
  if (v == std::string::npos) throw Error("bad .npy header near '" + key + "'").with("file", file);
  if (header[v] == '\'' || header[v] == '"') {
    size_t end = header.find(header[v], v + 1);
    if (end == std::string::npos) throw Error("bad .npy header near '" + key + "'").with("file", file);
    return header.substr(v + 1, end - v - 1);
  }
  if (header[v] == '(') {
    size_t end = header.find(')', v);
    if (end == std::string::npos) throw Error("bad .npy header near '" + key + "'").with("file", file);
    return header.substr(v, end - v + 1);
  }
  size_t end = header.find_first_of(",}", v);
  return header.substr(v, end == std::string::npos ? std::string::npos : end - v);
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Error::kind_of_errno(errno), "cannot open .npy file").with("file", path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_npy(bytes, path);
}

NpyArray parse_npy(const std::vector<char>& bytes, const std::string& path) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    throw Error("not a .npy file (bad magic)").with("file", path);
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error("truncated .npy header").with("file", path);
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    throw Error("unsupported .npy version " + std::to_string(major)).with("file", path);
  }
  if (header_len > bytes.size() - header_start) throw Error("truncated .npy header").with("file", path);
  std::string header(bytes.data() + header_start, header_len);
  NpyArray a;
  a.dtype = dtype_from_npy_descr(header_value(header, "descr", path), path);
  std::string fortran = header_value(header, "fortran_order", path);
  if (fortran.find("True") != std::string::npos)
    throw Error("Fortran-order .npy arrays are not supported (save with numpy.ascontiguousarray)").with("file", path);
  std::string shape = header_value(header, "shape", path);
  if (shape.empty() || shape.front() != '(') throw Error("bad .npy shape '" + shape + "'").with("file", path);
  size_t pos = 1;
  while (pos < shape.size()) {
    size_t digit = shape.find_first_of("0123456789", pos);
    if (digit == std::string::npos) break;
    size_t end = shape.find_first_not_of("0123456789", digit);
    if (end == std::string::npos) throw Error("bad .npy shape '" + shape + "'").with("file", path);
    if (end - digit > 18) throw Error("bad .npy shape '" + shape + "': dimension too large").with("file", path);
    a.shape.push_back(std::stoll(shape.substr(digit, end - digit)));
    pos = end;
  }
  size_t elem = a.dtype.bits == 1 ? 1 : a.dtype.bits / 8;
  size_t need;
  try {
    need = graphrt::dtype_bytes(DLDataType{a.dtype.code, static_cast<uint8_t>(elem * 8), 1}, a.numel());
  } catch (Error& e) {
    throw e.with("file", path);
  }
  size_t have = bytes.size() - header_start - header_len;
  if (have < need)
    throw Error("truncated .npy data: " + std::to_string(have) + " bytes for shape " +
                graphrt::shape_to_string(a.shape) + " (" + std::to_string(need) + " needed)")
        .with("file", path);
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header_start + header_len),
                bytes.begin() + static_cast<std::ptrdiff_t>(header_start + header_len + need));
  return a;
}

void write_npy(const std::string& path, DLDataType dtype, const std::vector<int64_t>& shape, const void* data,
               size_t nbytes) {
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
  write_output_file(path, bytes, ".npy file");
}

}  // namespace graphrt_apps
