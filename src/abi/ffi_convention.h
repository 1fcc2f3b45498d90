// The one adapter between tvm-ffi's calling convention (TVM v0.22+: TVMFFIAny
// values, safe-call functions) and graphrt's packed values (TVMValue + type
// code). Kernels of a v0.22+ library are FunctionNodes like any other; their
// calls convert here, so the executors and VMs never see a second ABI.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "abi/ffi_abi.h"
#include "base/call_buffer/call_buffer.h"
#include "graphrt/packed_func.h"

namespace graphrt {

// Calls the safe-call function `fn` (named `name` in errors) with packed
// arguments; its result lands in *ret. A failure throws the error the function
// raised (TVMFFIErrorSetRaised*), naming the function.
void ffi_call_packed(TVMFFISafeCallType fn, const std::string& name, const TVMArgs& args, RetValue* ret);

// tvm-ffi arguments seen as packed ones, for graphrt functions that generated
// v0.22+ code calls (TVMFFIFunctionCall). Borrowed: valid while `args` is.
class FfiArgsAsPacked {
 public:
  FfiArgsAsPacked(const TVMFFIAny* args, int32_t num_args);
  TVMArgs args() const { return TVMArgs(values_.data(), codes_.data(), size_); }

 private:
  CallBuffer<TVMValue> values_;
  CallBuffer<int> codes_;
  int size_ = 0;
  std::vector<std::unique_ptr<std::string>> strings_;  // small strings, copied out of their Any
};

// A packed return value as a tvm-ffi result (POD values only; anything else
// throws naming the type).
void ret_value_to_ffi(const RetValue& value, TVMFFIAny* out);

// Drops one strong reference of a tvm-ffi object, freeing it through its
// deleter when the last one goes.
void ffi_object_dec_ref(TVMFFIObject* object);

}  // namespace graphrt
