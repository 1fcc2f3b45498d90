// Packed functions: TVM's type-erased calling convention in C++.
#pragma once

#include "graphrt/export.h"

#include <functional>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/object.h"
#include "graphrt/tvm_abi.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

class ModuleNode;
class FunctionNode;
using Module = Ref<ModuleNode>;

const char* type_code_name(int code);

// A borrowed view of a call's arguments with checked conversions.
class TVMArgs {
 public:
  TVMArgs(const TVMValue* values, const int* codes, int size) : values_(values), codes_(codes), size_(size) {}
  int size() const { return size_; }
  int code(int i) const { return codes_[i]; }
  const TVMValue& value(int i) const { return values_[i]; }
  const TVMValue* values() const { return values_; }
  const int* codes() const { return codes_; }

  int64_t as_int(int i) const;  // codes 0 and 15 (v0.18 bools)
  double as_float(int i) const;  // code 2, or an int
  std::string as_string(int i) const;  // codes 11 and 12
  void* as_handle(int i) const;  // codes 3 and 4
  DLTensor* as_tensor(int i) const;  // codes 7 and 13
  NDArray as_ndarray(int i) const;  // code 13 shares; 7 is borrowed (caller keeps it alive)
  DLDevice as_device(int i) const;  // code 6
  DLDataType as_dtype(int i) const;  // code 5, or a dtype string
  Module as_module(int i) const;  // code 9
  Ref<FunctionNode> as_function(int i) const;  // code 10
  Ref<Object> as_object(int i) const;  // codes 8, 9, 10

 private:
  void expect(int i, std::initializer_list<int> codes, const char* what) const;
  const TVMValue* values_;
  const int* codes_;
  int size_;
};

// An owned return value (or owned argument, when building calls).
class RetValue {
 public:
  RetValue() { value_.v_handle = nullptr; }
  RetValue(const RetValue& other);
  RetValue& operator=(const RetValue& other);
  RetValue(RetValue&& other) noexcept;
  RetValue& operator=(RetValue&& other) noexcept;
  ~RetValue();

  void set_none();
  void set_int(int64_t v);
  void set_bool(bool v);
  void set_float(double v);
  void set_handle(void* v);
  void set_string(std::string s);
  void set_bytes(std::string s);
  void set_device(DLDevice dev);
  void set_dtype(DLDataType t);
  void set_ndarray(NDArray a);
  void set_module(Module m);
  void set_function(Ref<FunctionNode> f);
  void set_object(Ref<Object> o);
  // Copies argument i (objects gain a reference, strings are copied).
  void set_arg(const TVMArgs& args, int i);

  int code() const { return code_; }
  const TVMValue& value() const { return value_; }
  bool is_none() const { return code_ == kTVMNullptr; }
  // Views of this value as a one-element argument list.
  TVMArgs as_args() const { return TVMArgs(&value_, &code_, 1); }
  int64_t as_int() const { return as_args().as_int(0); }
  double as_float() const { return as_args().as_float(0); }
  std::string as_string() const { return as_args().as_string(0); }
  NDArray as_ndarray() const { return as_args().as_ndarray(0); }
  Module as_module() const;
  Ref<FunctionNode> as_function() const;

  // Moves the value out into C-ABI form; objects carry one reference to the
  // receiver, strings/bytes point at thread-local storage.
  void release_to_c(TVMValue* value, int* code);

 private:
  void clear();
  void copy_from(const RetValue& other);
  TVMValue value_;
  int code_ = kTVMNullptr;
  std::string str_;
  TVMByteArray bytes_{nullptr, 0};
};

using PackedBody = std::function<void(const TVMArgs& args, RetValue* ret)>;

// A callable: either a C++ body or a raw generated C function (fast path).
class FunctionNode : public Object {
 public:
  explicit FunctionNode(PackedBody body, std::string name = "") : body_(std::move(body)), name_(std::move(name)) {}
  // Wraps a generated function; `owner` keeps its code mapped.
  FunctionNode(TVMBackendPackedCFunc cfunc, std::string name, Ref<Object> owner);
  // A function compiled for TVM v0.22+ (tvm-ffi's safe call:
  // int(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result));
  // its calls convert through the core's one tvm-ffi adapter.
  struct FfiSafeCall {
    void* address;
  };
  GRAPHRT_HEADER_ONLY FunctionNode(FfiSafeCall ffi_func, std::string name, Ref<Object> owner);  // core only

  void call(const TVMArgs& args, RetValue* ret) const;
  const char* object_type_key() const override { return "runtime.PackedFunc"; }
  const std::string& name() const { return name_; }
  // Non-null for functions compiled by TVM: callers on hot paths may call it
  // directly and must then read the error with last_error().
  TVMBackendPackedCFunc backend_c_func() const { return cfunc_; }
  // Non-null for functions compiled by TVM v0.22+ (tvm-ffi's safe call): hot paths build
  // their arguments in that ABI and call it directly (src/layer_api/ffi_kernel_call.h).
  void* ffi_safe_call() const { return ffi_func_; }

 private:
  PackedBody body_;
  TVMBackendPackedCFunc cfunc_ = nullptr;
  void* ffi_func_ = nullptr;
  std::string name_;
  Ref<Object> owner_;
};
using PackedFunc = Ref<FunctionNode>;

GRAPHRT_HEADER_ONLY inline PackedFunc make_function(PackedBody body, std::string name = "") {
  return make_ref<FunctionNode>(std::move(body), std::move(name));
}

// Builds an argument list for calls from C++:
//   ArgList args;
//   args.add_ndarray(x).add_string("s");
//   RetValue r = call_function(f, args);
class ArgList {
 public:
  ArgList& add_int(int64_t v);
  ArgList& add_float(double v);
  ArgList& add_string(const std::string& s);
  ArgList& add_tensor(DLTensor* t);
  ArgList& add_ndarray(const NDArray& a);
  ArgList& add_device(DLDevice d);
  ArgList& add_handle(void* p);
  ArgList& add_module(const Module& m);
  TVMArgs args() const { return TVMArgs(values_.data(), codes_.data(), static_cast<int>(values_.size())); }

 private:
  ArgList& push(TVMValue value, int code);
  std::vector<TVMValue> values_;
  std::vector<int> codes_;
  std::vector<std::unique_ptr<std::string>> strings_;
  std::vector<NDArray> arrays_;
  std::vector<Module> modules_;
};

RetValue call_function(const PackedFunc& f, const ArgList& args);
// call_function with values another call returned (objects, shapes, arrays), each passed as
// it is held.
RetValue call_with_values(const PackedFunc& f, const std::vector<RetValue>& args);

// The calling thread's last error message (TVMGetLastError semantics) and
// kind. Both stay until the thread's next failure: a success clears neither.
const std::string& last_error();
ErrorKind last_error_kind();
void set_last_error(const std::string& message, ErrorKind kind = ErrorKind::kInvalidArgument);
// The last error as an exception of its kind: what a C++ caller throws when
// a C call it made returned non-zero. Static: each user keeps its own copy,
// so that it never joins libgraphrt's exported names.
static inline Error last_error_as_exception() { return Error(last_error_kind(), last_error()); }

}  // namespace graphrt
#pragma GCC visibility pop
