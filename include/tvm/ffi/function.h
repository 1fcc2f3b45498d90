// tvm::ffi::Function: TVM v0.22+'s callable, over graphrt's packed functions.
//
//   Any y = f(x, 1, "name");                   // any mix of values (Any/AnyView conversions)
//   std::optional<Function> g = Function::GetGlobal("runtime.ShapeTuple");
//   Function h = Function::FromPacked([](PackedArgs args, Any* rv) { *rv = args[0]; });
//
// Calls that fail inside graphrt throw tvm::ffi::Error.
#ifndef TVM_FFI_FUNCTION_H_
#define TVM_FFI_FUNCTION_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "graphrt/packed_func.h"
#include "graphrt/runtime.h"

namespace tvm {
namespace ffi {

// The arguments a packed body is called with (borrowed for the call).
class PackedArgs {
 public:
  PackedArgs(const AnyView* data, int32_t size) : data_(data), size_(size) {}
  int size() const { return size_; }
  const AnyView* data() const { return data_; }
  AnyView operator[](int i) const {
    if (i < 0 || i >= size_) TVM_FFI_THROW(IndexError) << "argument " << i << " of a call with " << size_;
    return data_[i];
  }
  PackedArgs Slice(int begin, int end = -1) const {
    if (end < 0) end = size_;
    return PackedArgs(data_ + begin, end - begin);
  }

 private:
  const AnyView* data_;
  int32_t size_;
};

class Function {
 public:
  Function() = default;
  Function(std::nullptr_t) {}  // NOLINT: implicit, as TVM's null reference
  explicit Function(::graphrt::PackedFunc f) : f_(std::move(f)) {}

  template <typename... Args>
  Any operator()(Args&&... args) const {
    const AnyView views[sizeof...(Args) + 1] = {AnyView(std::forward<Args>(args))..., AnyView()};
    Any result;
    CallPacked(views, static_cast<int32_t>(sizeof...(Args)), &result);
    return result;
  }
  void CallPacked(const AnyView* args, int32_t num_args, Any* result) const {
    if (!f_) TVM_FFI_THROW(RuntimeError) << "call of a null Function";
    std::vector<TVMValue> values(static_cast<size_t>(num_args) + 1);
    std::vector<int> codes(static_cast<size_t>(num_args) + 1);
    for (int32_t i = 0; i < num_args; ++i) {
      values[i] = args[i].packed().value();
      codes[i] = args[i].packed().code();
    }
    details::translate_errors([&] {
      ::graphrt::RetValue ret;
      f_->call(::graphrt::TVMArgs(values.data(), codes.data(), num_args), &ret);
      *result = Any::FromGraphrt(std::move(ret));
    });
  }
  void CallPacked(PackedArgs args, Any* result) const { CallPacked(args.data(), args.size(), result); }

  // A function over a packed body: void(PackedArgs args, Any* rv) or
  // void(const AnyView* args, int32_t num_args, Any* rv).
  template <typename Body>
  static Function FromPacked(Body body) {
    return Function(::graphrt::make_function([body](const ::graphrt::TVMArgs& args, ::graphrt::RetValue* ret) {
      std::vector<AnyView> views(static_cast<size_t>(args.size()));
      for (int i = 0; i < args.size(); ++i) {
        Any copy = Any::FromGraphrt(::graphrt::RetValue());
        copy.packed().owned().set_arg(args, i);
        if (args.code(i) == kTVMDLTensorHandle)
          copy.packed().set_tensor_pointer(static_cast<DLTensor*>(args.value(i).v_handle));
        views[static_cast<size_t>(i)] = copy;
      }
      Any rv;
      if constexpr (std::is_invocable<Body, PackedArgs, Any*>::value) {
        body(PackedArgs(views.data(), args.size()), &rv);
      } else {
        body(static_cast<const AnyView*>(views.data()), static_cast<int32_t>(args.size()), &rv);
      }
      TVMValue value;
      int code;
      ret->set_arg(rv.packed().view(&value, &code), 0);
    }));
  }

  // The global function `name` (graphrt's default runtime), or nullopt.
  static std::optional<Function> GetGlobal(std::string_view name) {
    ::graphrt::PackedFunc f = details::translate_errors([&] { return ::graphrt::runtime().function(std::string(name)); });
    if (!f) return std::nullopt;
    return Function(std::move(f));
  }
  static std::optional<Function> GetGlobal(const char* name) { return GetGlobal(std::string_view(name)); }
  static std::optional<Function> GetGlobal(const std::string& name) { return GetGlobal(std::string_view(name)); }
  static std::optional<Function> GetGlobal(const String& name) { return GetGlobal(std::string_view(name.str())); }
  // The same; a missing name is a ValueError naming it.
  static Function GetGlobalRequired(std::string_view name) {
    std::optional<Function> f = GetGlobal(name);
    if (!f) TVM_FFI_THROW(ValueError) << "global function '" << name << "' not found";
    return *std::move(f);
  }
  static void SetGlobal(std::string_view name, Function func, bool override = false) {
    details::translate_errors([&] { ::graphrt::runtime().set_function(std::string(name), func.f_, override); });
  }
  static std::vector<String> ListGlobalNames() {
    std::vector<String> out;
    for (const std::string& n : ::graphrt::runtime().function_names()) out.emplace_back(n);
    return out;
  }
  static void RemoveGlobal(const String& name) { ::graphrt::runtime().remove_function(name.str()); }

  bool defined() const { return static_cast<bool>(f_); }
  bool operator==(std::nullptr_t) const { return !f_; }
  bool operator!=(std::nullptr_t) const { return static_cast<bool>(f_); }
  bool same_as(const Function& other) const { return f_ == other.f_; }
  const ::graphrt::PackedFunc& graphrt_function() const { return f_; }

 private:
  ::graphrt::PackedFunc f_;
};

template <>
struct TypeTraits<Function> {
  static void Into(const Function& v, details::PackedValue* out) {
    if (v.defined()) out->owned().set_function(v.graphrt_function());
    else out->owned().set_none();
  }
  static std::optional<Function> TryFrom(const details::PackedValue& v) {
    if (v.code() != kTVMPackedFuncHandle) return std::nullopt;
    TVMValue value;
    int code;
    return Function(v.view(&value, &code).as_function(0));
  }
  static std::string TypeName() { return "ffi.Function"; }
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_FUNCTION_H_
