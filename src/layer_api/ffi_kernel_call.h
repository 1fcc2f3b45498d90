// Kernels of TVM v0.22+ libraries (tvm-ffi's safe call) called in their own ABI from a hot
// path: the caller writes TVMFFIAny arguments straight from its values, once per call, instead
// of packed values that FunctionNode::call converts again on every call (and a RetValue it
// then clears). The conversion rules are the core's one tvm-ffi adapter's (abi/ffi_convention).
#pragma once

#include <string>

#include "graphrt/packed_func.h"
#include "../abi/ffi_abi.h"  // the layers above reach tvm-ffi's layout through this header only

namespace graphrt {

using FfiKernel = TVMFFISafeCallType;

inline FfiKernel ffi_kernel_of(const FunctionNode& f) { return reinterpret_cast<FfiKernel>(f.ffi_safe_call()); }

inline void ffi_arg_int(TVMFFIAny* a, int64_t v) {
  a->type_index = kFfiInt;
  a->zero_padding = 0;
  a->v_int64 = v;
}
inline void ffi_arg_float(TVMFFIAny* a, double v) {
  a->type_index = kFfiFloat;
  a->zero_padding = 0;
  a->v_float64 = v;
}
inline void ffi_arg_dtype(TVMFFIAny* a, DLDataType t) {
  a->type_index = kFfiDataType;
  a->zero_padding = 0;
  a->v_int64 = 0;
  a->v_dtype = t;
}
inline void ffi_arg_str(TVMFFIAny* a, const char* s) {
  a->type_index = kFfiRawStr;
  a->zero_padding = 0;
  a->v_c_str = s;
}
// A tensor is always passed as DLTensor* (a runtime may; TVM's own does for its tensors' views).
inline void ffi_arg_tensor(TVMFFIAny* a, DLTensor* t) {
  a->type_index = t ? kFfiDLTensorPtr : kFfiNone;
  a->zero_padding = 0;
  a->v_ptr = t;
}
inline void ffi_arg_none(TVMFFIAny* a) {
  a->type_index = kFfiNone;
  a->zero_padding = 0;
  a->v_int64 = 0;
}

// Calls `fn` (named `name` in errors) with `n` arguments; returns its result, which the caller
// reads when it is None, int, bool or float and else hands to ffi_result_to_ret. A failure
// throws the kernel's error (or "failed without a message"), naming it.
TVMFFIAny ffi_kernel_invoke(FfiKernel fn, const std::string& name, const TVMFFIAny* args, int n);
// Any other result as a packed value (objects released; unsupported types throw naming `name`).
void ffi_kernel_result_to_ret(TVMFFIAny* result, const std::string& name, RetValue* ret);

}  // namespace graphrt
