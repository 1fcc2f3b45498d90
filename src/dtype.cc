// dtype, shape and device formatting/parsing (TVM's String2DLDataType rules).
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"

namespace graphrt {

size_t dtype_bytes(DLDataType dtype, int64_t numel) {
  if (numel < 0) throw Error("negative element count " + std::to_string(numel));
  // TVM's rule (GetDataSize): every element takes whole bytes, so bool and
  // int4 take one byte each in every file and kernel of TVM's ABI.
  const size_t element = (static_cast<size_t>(dtype.bits) * dtype.lanes + 7) / 8;
  size_t total = 0;
  if (__builtin_mul_overflow(element, static_cast<size_t>(numel), &total))
    throw Error(std::to_string(numel) + " elements of " + dtype_to_string(dtype) + " overflow a 64-bit byte count");
  return total;
}

void check_tensor_dtype(DLDataType dtype) {
  if (dtype.lanes == 0) throw Error(ErrorKind::kUnsupported, "dtype " + dtype_to_string(dtype) + " has 0 lanes");
  if (dtype.bits == 0 || (dtype.bits & (dtype.bits - 1)) != 0)
    throw Error(ErrorKind::kUnsupported, "dtype " + dtype_to_string(dtype) + " has " + std::to_string(dtype.bits) +
                                             " bits, not a power of two");
}

int64_t shape_numel(const int64_t* shape, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) throw Error("shape " + shape_to_string(shape, ndim) + " has a negative dimension");
    if (__builtin_mul_overflow(n, shape[i], &n))
      throw Error("shape " + shape_to_string(shape, ndim) + " has more elements than fit in 64 bits");
  }
  return n;
}

std::string dtype_to_string(DLDataType t) {
  if (t.code == kDLOpaqueHandle && t.bits == 0 && t.lanes == 0) return "void";
  if (t.code == kDLUInt && t.bits == 1 && t.lanes == 1) return "bool";
  // DLPack's kDLBool (TVM v0.22+, PyTorch): one byte per element. TVM up to v0.20 gave code 6 to
  // e4m3 float8, which its CPU exports do not use.
  if (t.code == kDLBoolCode && t.bits == 8 && t.lanes == 1) return "bool";
  std::string base;
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLOpaqueHandle: return "handle";
    case kDLBfloat: base = "bfloat"; break;
    case 6: return "e4m3_float8";  // TVM up to v0.20 (8-bit single-lane code 6 is bool, above)
    case 7: return "e5m2_float8";
    default: base = "code" + std::to_string(t.code) + "_"; break;
  }
  std::string s = base + std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

static DLDataType parse_dtype(const std::string& text) {
  if (text.empty() || text == "void") return DLDataType{kDLOpaqueHandle, 0, 0};
  if (text == "bool") return DLDataType{kDLUInt, 1, 1};
  if (text == "handle") return DLDataType{kDLOpaqueHandle, 64, 1};
  if (text == "e4m3_float8") return DLDataType{6, 8, 1};
  if (text == "e5m2_float8") return DLDataType{7, 8, 1};
  struct Base { const char* name; uint8_t code; };
  static const Base bases[] = {{"bfloat", kDLBfloat}, {"float", kDLFloat}, {"uint", kDLUInt}, {"int", kDLInt}};
  for (const Base& b : bases) {
    std::string name = b.name;
    if (text.compare(0, name.size(), name) != 0) continue;
    std::string rest = text.substr(name.size());
    DLDataType t{b.code, 32, 1};
    size_t x = rest.find('x');
    std::string bits = rest.substr(0, x);
    if (!bits.empty()) {
      char* end = nullptr;
      long v = std::strtol(bits.c_str(), &end, 10);
      if (*end != '\0' || v <= 0 || v > 255) break;
      t.bits = static_cast<uint8_t>(v);
    }
    if (x != std::string::npos) {
      char* end = nullptr;
      long lanes = std::strtol(rest.c_str() + x + 1, &end, 10);
      if (*end != '\0' || lanes <= 0 || lanes > 65535) break;
      t.lanes = static_cast<uint16_t>(lanes);
    }
    return t;
  }
  throw Error("unknown dtype " + quote_untrusted(text));
}

DLDataType dtype_from_string(const std::string& text) { return parse_dtype(text); }

std::string shape_to_string(const int64_t* shape, int ndim) {
  std::ostringstream os;
  os << "(";
  for (int i = 0; i < ndim; ++i) os << (i ? ", " : "") << shape[i];
  if (ndim == 1) os << ",";
  os << ")";
  return os.str();
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  return shape_to_string(shape.data(), static_cast<int>(shape.size()));
}

std::string device_to_string(DLDevice dev) {
  switch (dev.device_type) {
    case kDLCPU: return "cpu(" + std::to_string(dev.device_id) + ")";
    case kDLCUDA: return "cuda(" + std::to_string(dev.device_id) + ")";
    case kDLCUDAHost: return "cuda_host(" + std::to_string(dev.device_id) + ")";
    case kDLVulkan: return "vulkan(" + std::to_string(dev.device_id) + ")";
    case kDLOpenCL: return "opencl(" + std::to_string(dev.device_id) + ")";
    default:
      return "device_type_" + std::to_string(dev.device_type) + "(" + std::to_string(dev.device_id) + ")";
  }
}

}  // namespace graphrt
