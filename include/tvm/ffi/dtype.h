// DLDataType helpers of tvm-ffi: "float32" <-> DLDataType.
#ifndef TVM_FFI_DTYPE_H_
#define TVM_FFI_DTYPE_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/string.h>

#include <ostream>
#include <string>

#include "graphrt/ndarray.h"

namespace tvm {
namespace ffi {

inline String DLDataTypeToString(DLDataType dtype) {
  return details::translate_errors([&] { return String(::graphrt::dtype_to_string(dtype)); });
}
inline DLDataType StringToDLDataType(const String& str) {
  return details::translate_errors([&] { return ::graphrt::dtype_from_string(str.str()); });
}

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_DTYPE_H_
