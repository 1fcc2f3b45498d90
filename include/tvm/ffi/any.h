// tvm::ffi::Any (an owned value of any type) and tvm::ffi::AnyView (what a call is
// handed): what TVM v0.22+ functions take and return, over graphrt's packed values.
//
//   Any y = f(x, 1, "name");
//   tvm::runtime::Tensor t = y.cast<tvm::runtime::Tensor>();   // TypeError when it is not one
//   std::optional<int64_t> n = y.try_cast<int64_t>();
//
// Each C++ type a value converts to or from has a TypeTraits<T> specialisation (here for
// numbers, strings, devices, dtypes, DLTensor*, Tensor, Shape and Optional; Function,
// Module and Array in their own headers).
#ifndef TVM_FFI_ANY_H_
#define TVM_FFI_ANY_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graphrt/packed_func.h"
#include "graphrt/runtime.h"

namespace tvm {
namespace ffi {

// tvm-ffi's static type indices (c_api.h's TVMFFITypeIndex), for type_index().
struct TypeIndex {
  enum : int32_t {
    kTVMFFINone = 0, kTVMFFIInt = 1, kTVMFFIBool = 2, kTVMFFIFloat = 3, kTVMFFIOpaquePtr = 4,
    kTVMFFIDataType = 5, kTVMFFIDevice = 6, kTVMFFIDLTensorPtr = 7, kTVMFFIRawStr = 8,
    kTVMFFIByteArrayPtr = 9, kTVMFFIObject = 64, kTVMFFIStr = 65, kTVMFFIBytes = 66,
    kTVMFFIError = 67, kTVMFFIFunction = 68, kTVMFFIShape = 69, kTVMFFITensor = 70,
    kTVMFFIArray = 71, kTVMFFIMap = 72, kTVMFFIModule = 73,
  };
};

class Any;
class AnyView;

// How a C++ type goes into a value (Into) and comes out (TryFrom: nullopt when the value
// holds another type). TypeName() names the type in a failed cast's message.
template <typename T, typename = void>
struct TypeTraits {};  // a type without one converts neither way

namespace details {

// A value in graphrt's packed form: owned (a RetValue: objects referenced, strings copied),
// or a borrowed DLTensor* (a caller's tensor, passed as TVM passes one).
class PackedValue {
 public:
  PackedValue() { borrowed_.v_handle = nullptr; }

  TVMValue value() const { return is_borrowed_ ? borrowed_ : owned_.value(); }
  int code() const { return is_borrowed_ ? kTVMDLTensorHandle : owned_.code(); }
  ::graphrt::TVMArgs view(TVMValue* value, int* code) const {
    *value = this->value();
    *code = this->code();
    return ::graphrt::TVMArgs(value, code, 1);
  }
  ::graphrt::RetValue& owned() {
    is_borrowed_ = false;
    return owned_;
  }
  void set_tensor_pointer(DLTensor* tensor) {
    owned_.set_none();
    is_borrowed_ = tensor != nullptr;
    borrowed_.v_handle = tensor;
  }
  // The referenced object, or null when the value holds none.
  ::graphrt::Ref<::graphrt::Object> object() const {
    if (code() != kTVMObjectHandle) return {};
    TVMValue v;
    int c;
    return view(&v, &c).as_object(0);
  }
  std::string object_type_key() const {
    ::graphrt::Ref<::graphrt::Object> obj = object();
    return obj ? obj->object_type_key() : std::string();
  }

 private:
  ::graphrt::RetValue owned_;
  TVMValue borrowed_;
  bool is_borrowed_ = false;
};

// A global function of graphrt's default runtime that the value conversions need (TVM's
// runtime.ShapeTuple, runtime.Array, ...: libgraphrt registers them).
inline ::graphrt::RetValue call_runtime_global(const char* name, const std::vector<PackedValue>& args) {
  return translate_errors([&] {
    ::graphrt::PackedFunc f = ::graphrt::runtime().function(name);
    if (!f) TVM_FFI_THROW(InternalError) << "global function '" << name << "' is missing from libgraphrt";
    std::vector<TVMValue> values(args.size());
    std::vector<int> codes(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      values[i] = args[i].value();
      codes[i] = args[i].code();
    }
    ::graphrt::RetValue ret;
    f->call(::graphrt::TVMArgs(values.data(), codes.data(), static_cast<int>(args.size())), &ret);
    return ret;
  });
}
inline PackedValue int_value(int64_t v) {
  PackedValue p;
  p.owned().set_int(v);
  return p;
}

// tvm-ffi's type index and key of a packed value.
inline int32_t type_index_of(const PackedValue& v) {
  switch (v.code()) {
    case kTVMNullptr: return TypeIndex::kTVMFFINone;
    case kDLInt: case kDLUInt: return TypeIndex::kTVMFFIInt;
    case kTVMArgBool: return TypeIndex::kTVMFFIBool;
    case kDLFloat: return TypeIndex::kTVMFFIFloat;
    case kTVMOpaqueHandle: return TypeIndex::kTVMFFIOpaquePtr;
    case kTVMDataType: return TypeIndex::kTVMFFIDataType;
    case kDLDevice: return TypeIndex::kTVMFFIDevice;
    case kTVMDLTensorHandle: return TypeIndex::kTVMFFIDLTensorPtr;
    case kTVMStr: return TypeIndex::kTVMFFIStr;
    case kTVMBytes: return TypeIndex::kTVMFFIBytes;
    case kTVMPackedFuncHandle: return TypeIndex::kTVMFFIFunction;
    case kTVMNDArrayHandle: return TypeIndex::kTVMFFITensor;
    case kTVMModuleHandle: return TypeIndex::kTVMFFIModule;
    default: break;
  }
  const std::string key = v.object_type_key();
  if (key == "Array") return TypeIndex::kTVMFFIArray;
  if (key == "Map") return TypeIndex::kTVMFFIMap;
  if (key == "runtime.ShapeTuple") return TypeIndex::kTVMFFIShape;
  return TypeIndex::kTVMFFIObject;
}
inline std::string type_key_of(const PackedValue& v) {
  switch (type_index_of(v)) {
    case TypeIndex::kTVMFFINone: return "None";
    case TypeIndex::kTVMFFIInt: return "int";
    case TypeIndex::kTVMFFIBool: return "bool";
    case TypeIndex::kTVMFFIFloat: return "float";
    case TypeIndex::kTVMFFIOpaquePtr: return "void*";
    case TypeIndex::kTVMFFIDataType: return "DataType";
    case TypeIndex::kTVMFFIDevice: return "Device";
    case TypeIndex::kTVMFFIDLTensorPtr: return "DLTensor*";
    case TypeIndex::kTVMFFIStr: return "ffi.String";
    case TypeIndex::kTVMFFIBytes: return "ffi.Bytes";
    case TypeIndex::kTVMFFIFunction: return "ffi.Function";
    case TypeIndex::kTVMFFITensor: return "ffi.Tensor";
    case TypeIndex::kTVMFFIModule: return "ffi.Module";
    case TypeIndex::kTVMFFIArray: return "ffi.Array";
    case TypeIndex::kTVMFFIMap: return "ffi.Map";
    case TypeIndex::kTVMFFIShape: return "ffi.Shape";
    default: return v.object_type_key();
  }
}

// What Any and AnyView share: the value and its conversions.
class AnyBase {
 public:
  // The value as a T; a TypeError naming both types when it holds another type.
  template <typename T>
  T cast() const {
    std::optional<T> out = TypeTraits<std::decay_t<T>>::TryFrom(value_);
    if (!out)
      TVM_FFI_THROW(TypeError) << "Cannot convert from type `" << GetTypeKey() << "` to `"
                               << TypeTraits<std::decay_t<T>>::TypeName() << "`";
    return *std::move(out);
  }
  template <typename T>
  std::optional<T> try_cast() const {
    return TypeTraits<std::decay_t<T>>::TryFrom(value_);
  }
  template <typename T>
  std::optional<T> as() const {
    return try_cast<T>();
  }

  int32_t type_index() const { return type_index_of(value_); }
  std::string GetTypeKey() const { return type_key_of(value_); }
  bool operator==(std::nullptr_t) const { return value_.code() == kTVMNullptr; }
  bool operator!=(std::nullptr_t) const { return value_.code() != kTVMNullptr; }

  // The graphrt value behind this one.
  const PackedValue& packed() const { return value_; }
  PackedValue& packed() { return value_; }

 protected:
  PackedValue value_;
};

template <typename T>
using EnableIfConvertible = decltype(TypeTraits<std::decay_t<T>>::Into(std::declval<const std::decay_t<T>&>(),
                                                                         std::declval<PackedValue*>()));
}  // namespace details

// A value handed to a call (graphrt holds what it refers to while the view lives).
class AnyView : public details::AnyBase {
 public:
  AnyView() = default;
  AnyView(const AnyView&) = default;
  AnyView& operator=(const AnyView&) = default;
  AnyView(const Any& other);  // NOLINT: implicit, as TVM's
  template <typename T, typename = std::enable_if_t<!std::is_base_of<details::AnyBase, std::decay_t<T>>::value>,
            typename = details::EnableIfConvertible<T>>
  AnyView(const T& v) {  // NOLINT: implicit, as TVM's
    TypeTraits<std::decay_t<T>>::Into(v, &value_);
  }
  // A string literal (an array, not a const char*: the template above would not decay it).
  AnyView(const char* s);  // NOLINT: implicit
};

// An owned value: what a call returns.
class Any : public details::AnyBase {
 public:
  Any() = default;
  Any(const Any&) = default;
  Any& operator=(const Any&) = default;
  Any(const AnyView& view) { value_ = view.packed(); }  // NOLINT: implicit, as TVM's
  template <typename T, typename = std::enable_if_t<!std::is_base_of<details::AnyBase, std::decay_t<T>>::value>,
            typename = details::EnableIfConvertible<T>>
  Any(const T& v) {  // NOLINT: implicit, as TVM's
    TypeTraits<std::decay_t<T>>::Into(v, &value_);
  }
  Any(const char* s);  // NOLINT: implicit
  // A graphrt return value as an Any (a DLTensor* return stays borrowed, as TVM's).
  static Any FromGraphrt(::graphrt::RetValue ret) {
    Any a;
    a.value_.owned() = std::move(ret);
    return a;
  }
};

inline AnyView::AnyView(const Any& other) { value_ = other.packed(); }

// ---- TypeTraits of the basic types ----

template <>
struct TypeTraits<Any> {
  static void Into(const Any& v, details::PackedValue* out) { *out = v.packed(); }
  static std::optional<Any> TryFrom(const details::PackedValue& v) {
    Any a;
    a.packed() = v;
    return a;
  }
  static std::string TypeName() { return "Any"; }
};
template <>
struct TypeTraits<AnyView> {
  static std::optional<AnyView> TryFrom(const details::PackedValue& v) {
    AnyView a;
    a.packed() = v;
    return a;
  }
  static std::string TypeName() { return "AnyView"; }
};

template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value>> {
  static void Into(T v, details::PackedValue* out) { out->owned().set_int(static_cast<int64_t>(v)); }
  static std::optional<T> TryFrom(const details::PackedValue& v) {
    const int c = v.code();
    if (c != kDLInt && c != kDLUInt && c != kTVMArgBool) return std::nullopt;
    return static_cast<T>(v.value().v_int64);
  }
  static std::string TypeName() { return "int"; }
};
template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_enum<T>::value>> {
  static void Into(T v, details::PackedValue* out) { out->owned().set_int(static_cast<int64_t>(v)); }
  static std::optional<T> TryFrom(const details::PackedValue& v) {
    if (v.code() != kDLInt && v.code() != kDLUInt) return std::nullopt;
    return static_cast<T>(v.value().v_int64);
  }
  static std::string TypeName() { return "int"; }
};
template <>
struct TypeTraits<bool> {
  static void Into(bool v, details::PackedValue* out) { out->owned().set_bool(v); }
  static std::optional<bool> TryFrom(const details::PackedValue& v) {
    if (v.code() != kTVMArgBool && v.code() != kDLInt) return std::nullopt;
    return v.value().v_int64 != 0;
  }
  static std::string TypeName() { return "bool"; }
};
template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_floating_point<T>::value>> {
  static void Into(T v, details::PackedValue* out) { out->owned().set_float(static_cast<double>(v)); }
  static std::optional<T> TryFrom(const details::PackedValue& v) {
    if (v.code() == kDLFloat) return static_cast<T>(v.value().v_float64);
    if (v.code() == kDLInt || v.code() == kTVMArgBool) return static_cast<T>(v.value().v_int64);
    return std::nullopt;
  }
  static std::string TypeName() { return "float"; }
};
template <>
struct TypeTraits<std::nullptr_t> {
  static void Into(std::nullptr_t, details::PackedValue* out) { out->owned().set_none(); }
  static std::string TypeName() { return "None"; }
};
template <>
struct TypeTraits<void*> {
  static void Into(void* v, details::PackedValue* out) {
    if (v) out->owned().set_handle(v);
    else out->owned().set_none();
  }
  static std::optional<void*> TryFrom(const details::PackedValue& v) {
    if (v.code() == kTVMNullptr) return static_cast<void*>(nullptr);
    if (v.code() != kTVMOpaqueHandle) return std::nullopt;
    return v.value().v_handle;
  }
  static std::string TypeName() { return "void*"; }
};
template <>
struct TypeTraits<DLDevice> {
  static void Into(DLDevice v, details::PackedValue* out) { out->owned().set_device(v); }
  static std::optional<DLDevice> TryFrom(const details::PackedValue& v) {
    if (v.code() != kDLDevice) return std::nullopt;
    return v.value().v_device;
  }
  static std::string TypeName() { return "Device"; }
};
template <>
struct TypeTraits<DLDataType> {
  static void Into(DLDataType v, details::PackedValue* out) { out->owned().set_dtype(v); }
  static std::optional<DLDataType> TryFrom(const details::PackedValue& v) {
    if (v.code() == kTVMDataType) return v.value().v_type;
    if (v.code() == kTVMStr) return StringToDLDataType(String(v.value().v_str));
    return std::nullopt;
  }
  static std::string TypeName() { return "DataType"; }
};
template <>
struct TypeTraits<DLTensor*> {
  static void Into(DLTensor* v, details::PackedValue* out) { out->set_tensor_pointer(v); }
  static std::optional<DLTensor*> TryFrom(const details::PackedValue& v) {
    if (v.code() != kTVMDLTensorHandle && v.code() != kTVMNDArrayHandle) return std::nullopt;
    return static_cast<DLTensor*>(v.value().v_handle);
  }
  static std::string TypeName() { return "DLTensor*"; }
};
template <>
struct TypeTraits<std::string> {
  static void Into(const std::string& v, details::PackedValue* out) { out->owned().set_string(v); }
  static std::optional<std::string> TryFrom(const details::PackedValue& v) {
    TVMValue value;
    int code;
    if (v.code() == kTVMStr || v.code() == kTVMBytes) return v.view(&value, &code).as_string(0);
    if (v.code() == kTVMDataType) return DLDataTypeToString(v.value().v_type).str();
    return std::nullopt;
  }
  static std::string TypeName() { return "std::string"; }
};
template <>
struct TypeTraits<const char*> {
  static void Into(const char* v, details::PackedValue* out) {
    if (v) out->owned().set_string(v);
    else out->owned().set_none();
  }
  static std::string TypeName() { return "const char*"; }
};
inline AnyView::AnyView(const char* s) { TypeTraits<const char*>::Into(s, &value_); }
inline Any::Any(const char* s) { TypeTraits<const char*>::Into(s, &value_); }

template <>
struct TypeTraits<String> {
  static void Into(const String& v, details::PackedValue* out) { out->owned().set_string(v.str()); }
  static std::optional<String> TryFrom(const details::PackedValue& v) {
    std::optional<std::string> s = TypeTraits<std::string>::TryFrom(v);
    if (!s) return std::nullopt;
    return String(*std::move(s));
  }
  static std::string TypeName() { return "ffi.String"; }
};
template <>
struct TypeTraits<Tensor> {
  static void Into(const Tensor& v, details::PackedValue* out) {
    if (v.defined()) out->owned().set_ndarray(v.graphrt_array());
    else out->owned().set_none();
  }
  static std::optional<Tensor> TryFrom(const details::PackedValue& v) {
    if (v.code() != kTVMNDArrayHandle) return std::nullopt;
    TVMValue value;
    int code;
    return Tensor(v.view(&value, &code).as_ndarray(0));
  }
  static std::string TypeName() { return "ffi.Tensor"; }
};
// A Shape crosses as TVM's shape object (graphrt's runtime.ShapeTuple).
template <>
struct TypeTraits<Shape> {
  static void Into(const Shape& v, details::PackedValue* out) {
    std::vector<details::PackedValue> dims;
    for (int64_t d : v) dims.push_back(details::int_value(d));
    out->owned() = details::call_runtime_global("runtime.ShapeTuple", dims);
  }
  static std::optional<Shape> TryFrom(const details::PackedValue& v) {
    if (v.object_type_key() != "runtime.ShapeTuple") return std::nullopt;
    const int64_t n = details::call_runtime_global("runtime.GetShapeTupleSize", {v}).as_int();
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < n; ++i)
      dims.push_back(details::call_runtime_global("runtime.GetShapeTupleElem", {v, details::int_value(i)}).as_int());
    return Shape(std::move(dims));
  }
  static std::string TypeName() { return "ffi.Shape"; }
};
template <typename T>
struct TypeTraits<Optional<T>> {
  static void Into(const Optional<T>& v, details::PackedValue* out) {
    if (v.has_value()) TypeTraits<T>::Into(*v, out);
    else out->owned().set_none();
  }
  static std::optional<Optional<T>> TryFrom(const details::PackedValue& v) {
    if (v.code() == kTVMNullptr) return Optional<T>();
    std::optional<T> inner = TypeTraits<T>::TryFrom(v);
    if (!inner) return std::nullopt;
    return Optional<T>(*std::move(inner));
  }
  static std::string TypeName() { return TypeTraits<T>::TypeName(); }
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_ANY_H_
