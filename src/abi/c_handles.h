// The C API's handles and arguments as both of its faces (TVM's C runtime API and graphrt's
// own) check them: a null handle or a bad (shape, ndim) pair is the caller's mistake, named.
#pragma once

#include <string>
#include <vector>

#include "graphrt/c_api.h"
#include "graphrt/error.h"
#include "graphrt/module.h"

namespace graphrt {
namespace c_handles {

inline ModuleNode* as_module(TVMModuleHandle h) {
  if (!h) throw Error(ErrorKind::kTypeMismatch, "null module handle");
  return static_cast<ModuleNode*>(h);
}
inline DLTensor* as_array(TVMArrayHandle h) {
  if (!h) throw Error(ErrorKind::kTypeMismatch, "null array handle");
  return h;
}
// A shape handed to the C API as (pointer, ndim); `function` names the call in the error.
inline void check_shape(const int64_t* shape, int ndim, const char* function) {
  if (ndim < 0 || (ndim > 0 && !shape)) throw Error(std::string(function) + ": bad shape");
}
inline std::vector<int64_t> shape_of(const int64_t* shape, int ndim, const char* function) {
  check_shape(shape, ndim, function);
  return std::vector<int64_t>(shape, shape + ndim);
}
inline DLDataType dtype_of(int code, int bits, int lanes) {
  return DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
}

}  // namespace c_handles
}  // namespace graphrt
