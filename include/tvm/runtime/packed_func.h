// TVM's packed-function C++ API: PackedFunc, TVMArgs, TVMArgValue,
// TVMRetValue and Module, over graphrt's packed functions and modules.
//
// A PackedFunc is called with any mix of arguments (integers, floats, bool,
// strings, DLTensor*, NDArray, Module, PackedFunc, Device, DLDataType,
// DataType, void*, nullptr); its result converts to whatever the caller
// assigns it to: Module, NDArray, PackedFunc, int, int64_t, double, bool,
// std::string, Device, DataType, void*.
#ifndef TVM_RUNTIME_PACKED_FUNC_H_
#define TVM_RUNTIME_PACKED_FUNC_H_

#include <tvm/runtime/c_runtime_api.h>
#include <tvm/runtime/data_type.h>
#include <tvm/runtime/logging.h>
#include <tvm/runtime/ndarray.h>

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graphrt/module.h"
#include "graphrt/packed_func.h"
#include "graphrt/runtime.h"

namespace tvm {
namespace runtime {

class Module;
class PackedFunc;
class TVMArgValue;
class TVMRetValue;

namespace detail {
// Conversions shared by argument and return values: `args` views one value.
class ValueReader {
 public:
  explicit ValueReader(::graphrt::TVMArgs args) : args_(args) {}
  bool is_null() const { return args_.code(0) == kTVMNullptr; }
  int64_t as_int() const { return args_.as_int(0); }
  double as_float() const { return args_.as_float(0); }
  bool as_bool() const { return args_.as_int(0) != 0; }
  void* as_handle() const { return args_.as_handle(0); }
  std::string as_string() const {
    return args_.code(0) == kTVMDataType ? DLDataType2String(args_.value(0).v_type) : args_.as_string(0);
  }
  DLTensor* as_tensor() const { return is_null() ? nullptr : args_.as_tensor(0); }
  NDArray as_ndarray() const { return is_null() ? NDArray() : NDArray(args_.as_ndarray(0)); }
  Device as_device() const { return args_.as_device(0); }
  DLDataType as_dtype() const { return args_.as_dtype(0); }
  ::graphrt::Module as_module() const { return is_null() ? ::graphrt::Module() : args_.as_module(0); }
  ::graphrt::PackedFunc as_function() const {
    return is_null() ? ::graphrt::PackedFunc() : args_.as_function(0);
  }

 private:
  ::graphrt::TVMArgs args_;
};
}  // namespace detail

// Conversion operators shared by TVMArgValue and TVMRetValue (CRTP: Derived
// gives reader()). Definitions that need Module/PackedFunc come below them.
template <typename Derived>
class TVMValueConversions {
 public:
  operator int64_t() const { return reader().as_int(); }
  operator uint64_t() const { return static_cast<uint64_t>(reader().as_int()); }
  operator int() const { return static_cast<int>(reader().as_int()); }
  operator bool() const { return reader().as_bool(); }
  operator double() const { return reader().as_float(); }
  operator float() const { return static_cast<float>(reader().as_float()); }
  operator void*() const { return reader().as_handle(); }
  operator DLTensor*() const { return reader().as_tensor(); }
  operator std::string() const { return reader().as_string(); }
  operator Device() const { return reader().as_device(); }
  operator DLDataType() const { return reader().as_dtype(); }
  operator runtime::DataType() const { return runtime::DataType(reader().as_dtype()); }
  operator NDArray() const { return reader().as_ndarray(); }
  operator Module() const;
  operator PackedFunc() const;

 private:
  detail::ValueReader reader() const { return static_cast<const Derived*>(this)->reader(); }
};

// One argument of a call (borrowed: valid during the call).
class TVMArgValue : public TVMValueConversions<TVMArgValue> {
 public:
  TVMArgValue() { value_.v_handle = nullptr; }
  TVMArgValue(TVMValue value, int type_code) : value_(value), type_code_(type_code) {}
  int type_code() const { return type_code_; }
  const TVMValue& value() const { return value_; }
  detail::ValueReader reader() const { return detail::ValueReader(::graphrt::TVMArgs(&value_, &type_code_, 1)); }

 private:
  TVMValue value_;
  int type_code_ = kTVMNullptr;
};

// The arguments of a packed call.
class TVMArgs {
 public:
  const TVMValue* values;
  const int* type_codes;
  int num_args;

  TVMArgs(const TVMValue* values, const int* type_codes, int num_args)
      : values(values), type_codes(type_codes), num_args(num_args) {}
  int size() const { return num_args; }
  TVMArgValue operator[](int i) const {
    if (i < 0 || i >= num_args)
      throw Error(::graphrt::ErrorKind::kOutOfRange,
                  "argument index " + std::to_string(i) + " out of range (call has " + std::to_string(num_args) +
                  " arguments)");
    return TVMArgValue(values[i], type_codes[i]);
  }
};

// An owned value: what a packed function returns.
class TVMRetValue : public TVMValueConversions<TVMRetValue> {
 public:
  TVMRetValue() = default;
  int type_code() const { return ret_.code(); }
  detail::ValueReader reader() const { return detail::ValueReader(ret_.as_args()); }

  TVMRetValue& operator=(std::nullptr_t) { ret_.set_none(); return *this; }
  TVMRetValue& operator=(int64_t v) { ret_.set_int(v); return *this; }
  TVMRetValue& operator=(int v) { ret_.set_int(v); return *this; }
  TVMRetValue& operator=(bool v) { ret_.set_bool(v); return *this; }
  TVMRetValue& operator=(double v) { ret_.set_float(v); return *this; }
  TVMRetValue& operator=(void* v) { ret_.set_handle(v); return *this; }
  TVMRetValue& operator=(std::string v) { ret_.set_string(std::move(v)); return *this; }
  TVMRetValue& operator=(const char* v) { ret_.set_string(v ? v : ""); return *this; }
  TVMRetValue& operator=(const TVMByteArray& v) { ret_.set_bytes(std::string(v.data, v.size)); return *this; }
  TVMRetValue& operator=(Device v) { ret_.set_device(v); return *this; }
  TVMRetValue& operator=(DLDataType v) { ret_.set_dtype(v); return *this; }
  TVMRetValue& operator=(const runtime::DataType& v) { ret_.set_dtype(v); return *this; }
  TVMRetValue& operator=(const NDArray& v) { ret_.set_ndarray(v.graphrt_array()); return *this; }
  TVMRetValue& operator=(const Module& v);
  TVMRetValue& operator=(const PackedFunc& v);
  TVMRetValue& operator=(const TVMArgValue& v) {
    TVMValue value = v.value();
    int code = v.type_code();
    ret_.set_arg(::graphrt::TVMArgs(&value, &code, 1), 0);
    return *this;
  }

  // The graphrt value behind this one.
  ::graphrt::RetValue& graphrt_value() { return ret_; }
  const ::graphrt::RetValue& graphrt_value() const { return ret_; }

 private:
  ::graphrt::RetValue ret_;
};

// A callable with TVM's packed calling convention.
class PackedFunc {
 public:
  using FType = std::function<void(TVMArgs args, TVMRetValue* rv)>;

  PackedFunc() = default;
  PackedFunc(std::nullptr_t) {}  // NOLINT: implicit, as TVM's null reference
  explicit PackedFunc(::graphrt::PackedFunc f) : f_(std::move(f)) {}
  // Wraps a C++ body `void(TVMArgs, TVMRetValue*)`.
  template <typename Body, typename = std::enable_if_t<std::is_convertible<Body, FType>::value &&
                                                       !std::is_base_of<PackedFunc, std::decay_t<Body>>::value>>
  explicit PackedFunc(Body body) {
    FType call(std::move(body));
    f_ = ::graphrt::make_function([call](const ::graphrt::TVMArgs& args, ::graphrt::RetValue* ret) {
      TVMRetValue rv;
      call(TVMArgs(args.values(), args.codes(), args.size()), &rv);
      *ret = std::move(rv.graphrt_value());
    });
  }

  template <typename... Args>
  TVMRetValue operator()(Args&&... args) const;
  void CallPacked(TVMArgs args, TVMRetValue* rv) const {
    if (!f_) throw Error(::graphrt::ErrorKind::kFailedPrecondition, "call of a null PackedFunc");
    f_->call(::graphrt::TVMArgs(args.values, args.type_codes, args.num_args), &rv->graphrt_value());
  }

  bool defined() const { return static_cast<bool>(f_); }
  bool operator==(std::nullptr_t) const { return !f_; }
  bool operator!=(std::nullptr_t) const { return static_cast<bool>(f_); }
  const ::graphrt::PackedFunc& graphrt_function() const { return f_; }

 private:
  ::graphrt::PackedFunc f_;
};

// A loaded module: a tree of modules answering function names.
class Module {
 public:
  Module() = default;
  Module(std::nullptr_t) {}  // NOLINT: implicit, as TVM's null reference
  explicit Module(::graphrt::Module m) : m_(std::move(m)) {}

  // Loads a TVM export (format "" picks it from the file's extension).
  static Module LoadFromFile(const std::string& file_name, const std::string& format = "") {
    TVMModuleHandle handle = nullptr;
    if (TVMModLoadFromFile(file_name.c_str(), format.c_str(), &handle) != 0) throw ::graphrt::last_error_as_exception();
    return Module(::graphrt::Module::adopt(static_cast<::graphrt::ModuleNode*>(handle)));
  }

  // The function `name` (this module first, then its imports when
  // query_imports), or a null PackedFunc.
  PackedFunc GetFunction(const std::string& name, bool query_imports = false) const {
    return PackedFunc(node()->get_function(name, query_imports));
  }
  bool ImplementsFunction(const std::string& name, bool query_imports = false) const {
    return GetFunction(name, query_imports) != nullptr;
  }
  void Import(Module other) { node()->add_import(other.m_); }
  std::vector<Module> imports() const {
    std::vector<Module> out;
    for (const ::graphrt::Module& m : node()->imports()) out.push_back(Module(m));
    return out;
  }
  std::string type_key() const { return node()->type_key(); }

  // TVM code writes mod->GetFunction(...) as often as mod.GetFunction(...).
  const Module* operator->() const { return this; }
  Module* operator->() { return this; }

  bool defined() const { return static_cast<bool>(m_); }
  bool operator==(std::nullptr_t) const { return !m_; }
  bool operator!=(std::nullptr_t) const { return static_cast<bool>(m_); }
  bool same_as(const Module& other) const { return m_ == other.m_; }
  const ::graphrt::Module& graphrt_module() const { return m_; }

 private:
  ::graphrt::ModuleNode* node() const {
    if (!m_) throw Error(::graphrt::ErrorKind::kFailedPrecondition, "use of a null Module");
    return m_.get();
  }
  ::graphrt::Module m_;
};

template <typename Derived>
TVMValueConversions<Derived>::operator Module() const {
  return Module(reader().as_module());
}
template <typename Derived>
TVMValueConversions<Derived>::operator PackedFunc() const {
  return PackedFunc(reader().as_function());
}

inline TVMRetValue& TVMRetValue::operator=(const Module& v) {
  ret_.set_module(v.graphrt_module());
  return *this;
}
inline TVMRetValue& TVMRetValue::operator=(const PackedFunc& v) {
  ret_.set_function(v.graphrt_function());
  return *this;
}

namespace detail {
// Fills one TVMValue + type code per argument; values borrow from the
// arguments, which live until the call returns.
class ArgSetter {
 public:
  ArgSetter(TVMValue* values, int* codes) : values_(values), codes_(codes) {}

  template <typename T, typename = std::enable_if_t<(std::is_integral<T>::value || std::is_enum<T>::value) &&
                                                    !std::is_same<T, bool>::value>>
  void operator()(int i, T v) const {
    set_int(i, static_cast<int64_t>(v));
  }
  void operator()(int i, bool v) const {
    values_[i].v_int64 = v;
    codes_[i] = kTVMArgBool;
  }
  void operator()(int i, double v) const {
    values_[i].v_float64 = v;
    codes_[i] = kTVMArgFloat;
  }
  void operator()(int i, float v) const { (*this)(i, static_cast<double>(v)); }
  void operator()(int i, std::nullptr_t) const { set_handle(i, nullptr, kTVMNullptr); }
  void operator()(int i, void* v) const { set_handle(i, v, v ? kTVMOpaqueHandle : kTVMNullptr); }
  void operator()(int i, DLTensor* v) const { set_handle(i, v, v ? kTVMDLTensorHandle : kTVMNullptr); }
  void operator()(int i, const char* v) const {
    values_[i].v_str = v;
    codes_[i] = v ? kTVMStr : kTVMNullptr;
  }
  void operator()(int i, const std::string& v) const { (*this)(i, v.c_str()); }
  void operator()(int i, const TVMByteArray& v) const {
    set_handle(i, const_cast<TVMByteArray*>(&v), kTVMBytes);
  }
  void operator()(int i, Device v) const {
    values_[i].v_device = v;
    codes_[i] = kDLDevice;
  }
  void operator()(int i, DLDataType v) const {
    values_[i].v_type = v;
    codes_[i] = kTVMDataType;
  }
  void operator()(int i, const runtime::DataType& v) const { (*this)(i, static_cast<DLDataType>(v)); }
  void operator()(int i, const NDArray& v) const {
    set_handle(i, v.graphrt_array().handle(), v.defined() ? kTVMNDArrayHandle : kTVMNullptr);
  }
  void operator()(int i, const Module& v) const {
    set_handle(i, v.graphrt_module().get(), v.defined() ? kTVMModuleHandle : kTVMNullptr);
  }
  void operator()(int i, const PackedFunc& v) const {
    set_handle(i, v.graphrt_function().get(), v.defined() ? kTVMPackedFuncHandle : kTVMNullptr);
  }
  void operator()(int i, const TVMArgValue& v) const {
    values_[i] = v.value();
    codes_[i] = v.type_code();
  }
  void operator()(int i, const TVMRetValue& v) const {
    values_[i] = v.graphrt_value().value();
    codes_[i] = v.type_code();
  }

 private:
  void set_int(int i, int64_t v) const {
    values_[i].v_int64 = v;
    codes_[i] = kTVMArgInt;
  }
  void set_handle(int i, void* v, int code) const {
    values_[i].v_handle = v;
    codes_[i] = code;
  }
  TVMValue* values_;
  int* codes_;
};
}  // namespace detail

template <typename... Args>
TVMRetValue PackedFunc::operator()(Args&&... args) const {
  constexpr int kNumArgs = static_cast<int>(sizeof...(Args));
  TVMValue values[kNumArgs > 0 ? kNumArgs : 1];
  int codes[kNumArgs > 0 ? kNumArgs : 1];
  detail::ArgSetter setter(values, codes);
  int i = 0;
  (void)setter;
  (setter(i++, std::forward<Args>(args)), ...);
  (void)i;
  TVMRetValue rv;
  CallPacked(TVMArgs(values, codes, kNumArgs), &rv);
  return rv;
}

namespace detail {
// The signature R(Args...) of a function, function pointer or lambda.
template <typename F>
struct FunctionSignature : FunctionSignature<decltype(&F::operator())> {};
template <typename C, typename R, typename... Args>
struct FunctionSignature<R (C::*)(Args...) const> {
  using type = R(Args...);
};
template <typename C, typename R, typename... Args>
struct FunctionSignature<R (C::*)(Args...)> {
  using type = R(Args...);
};
template <typename R, typename... Args>
struct FunctionSignature<R (*)(Args...)> {
  using type = R(Args...);
};
template <typename R, typename... Args>
struct FunctionSignature<R(Args...)> {
  using type = R(Args...);
};
}  // namespace detail

template <typename Signature>
class TypedPackedFunc;

// A PackedFunc with a C++ signature: arguments are converted (and counted)
// on the way in, the result on the way out.
template <typename R, typename... Args>
class TypedPackedFunc<R(Args...)> {
 public:
  TypedPackedFunc() = default;
  TypedPackedFunc(std::nullptr_t) {}  // NOLINT: implicit, as TVM's null reference
  TypedPackedFunc(PackedFunc packed) : packed_(std::move(packed)) {}  // NOLINT: implicit as in TVM
  template <typename Body, typename = std::enable_if_t<std::is_convertible<Body, std::function<R(Args...)>>::value &&
                                                       !std::is_base_of<PackedFunc, std::decay_t<Body>>::value>>
  TypedPackedFunc(Body body, std::string name = "") {  // NOLINT: implicit as in TVM
    packed_ = PackedFunc([body, name](TVMArgs args, TVMRetValue* rv) {
      if (args.size() != static_cast<int>(sizeof...(Args)))
        throw Error(::graphrt::ErrorKind::kTypeMismatch,
                    "function " + (name.empty() ? std::string("<anonymous>") : name) + " expects " +
                    std::to_string(sizeof...(Args)) + " arguments, got " + std::to_string(args.size()));
      Invoke(body, args, rv, std::index_sequence_for<Args...>());
    });
  }

  R operator()(Args... args) const {
    TVMRetValue rv = packed_(std::forward<Args>(args)...);
    if constexpr (!std::is_void<R>::value) return rv.operator R();
  }
  const PackedFunc& packed() const { return packed_; }
  operator PackedFunc() const { return packed_; }
  bool operator==(std::nullptr_t) const { return packed_ == nullptr; }
  bool operator!=(std::nullptr_t) const { return packed_ != nullptr; }

 private:
  template <typename Body, size_t... I>
  static void Invoke(const Body& body, const TVMArgs& args, TVMRetValue* rv, std::index_sequence<I...>) {
    if constexpr (std::is_void<R>::value) {
      body(args[static_cast<int>(I)].operator std::decay_t<Args>()...);
    } else {
      *rv = body(args[static_cast<int>(I)].operator std::decay_t<Args>()...);
    }
  }
  PackedFunc packed_;
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_PACKED_FUNC_H_
