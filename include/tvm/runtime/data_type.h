// tvm::runtime::DataType: TVM's value type over DLPack's DLDataType.
#ifndef TVM_RUNTIME_DATA_TYPE_H_
#define TVM_RUNTIME_DATA_TYPE_H_

#include <tvm/runtime/c_runtime_api.h>

#include <ostream>
#include <string>

#include "graphrt/ndarray.h"

namespace tvm {
namespace runtime {

class DataType {
 public:
  enum TypeCode {
    kInt = kDLInt,
    kUInt = kDLUInt,
    kFloat = kDLFloat,
    kHandle = kTVMOpaqueHandle,
    kBFloat = kDLBfloat,
    kE4M3Float = 6U,
    kE5M2Float = 7U,
    kCustomBegin = 129
  };

  DataType() : DataType(kHandle, 0, 0) {}  // void
  explicit DataType(DLDataType dtype) : data_(dtype) {}
  DataType(int code, int bits, int lanes) {
    data_.code = static_cast<uint8_t>(code);
    data_.bits = static_cast<uint8_t>(bits);
    data_.lanes = static_cast<uint16_t>(lanes);
  }

  int code() const { return data_.code; }
  int bits() const { return data_.bits; }
  int lanes() const { return data_.lanes; }
  int bytes() const { return (bits() + 7) / 8; }
  bool is_scalar() const { return lanes() == 1; }
  bool is_vector() const { return lanes() > 1; }
  bool is_bool() const { return code() == kUInt && bits() == 1; }
  bool is_int() const { return code() == kInt; }
  bool is_uint() const { return code() == kUInt; }
  bool is_float() const { return code() == kFloat; }
  bool is_float16() const { return is_float() && bits() == 16; }
  bool is_bfloat16() const { return code() == kBFloat && bits() == 16; }
  bool is_void() const { return code() == kHandle && bits() == 0 && lanes() == 0; }
  bool is_handle() const { return code() == kHandle && !is_void(); }
  DataType with_lanes(int lanes) const { return DataType(code(), bits(), lanes); }
  DataType with_bits(int bits) const { return DataType(code(), bits, lanes()); }
  DataType element_of() const { return with_lanes(1); }

  bool operator==(const DataType& other) const {
    return data_.code == other.data_.code && data_.bits == other.data_.bits && data_.lanes == other.data_.lanes;
  }
  bool operator!=(const DataType& other) const { return !(*this == other); }
  operator DLDataType() const { return data_; }

  static DataType Int(int bits, int lanes = 1) { return DataType(kInt, bits, lanes); }
  static DataType UInt(int bits, int lanes = 1) { return DataType(kUInt, bits, lanes); }
  static DataType Float(int bits, int lanes = 1) { return DataType(kFloat, bits, lanes); }
  static DataType BFloat(int bits, int lanes = 1) { return DataType(kBFloat, bits, lanes); }
  static DataType Bool(int lanes = 1) { return UInt(1, lanes); }
  static DataType Handle(int bits = 64, int lanes = 1) { return DataType(kHandle, bits, lanes); }
  static DataType Void() { return DataType(); }

 private:
  DLDataType data_;
};

// "float32", "int8", "float16x4", ... (throws tvm::Error on text it cannot read).
inline std::string DLDataType2String(DLDataType t) { return ::graphrt::dtype_to_string(t); }
inline DLDataType String2DLDataType(const std::string& s) { return ::graphrt::dtype_from_string(s); }

inline std::ostream& operator<<(std::ostream& os, DLDataType t) { return os << DLDataType2String(t); }
inline std::ostream& operator<<(std::ostream& os, const DataType& t) {
  return os << DLDataType2String(static_cast<DLDataType>(t));
}

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_DATA_TYPE_H_
