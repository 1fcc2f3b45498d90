#include "graphrt/packed_func.h"

#include <cstring>

#include "abi/c_api_support.h"
#include "abi/ffi_convention.h"
#include "layer_api/kernel_failure.h"
#include "graphrt/module.h"

namespace graphrt {

const char* type_code_name(int code) {
  switch (code) {
    case kTVMArgInt: return "int";
    case 1: return "uint";
    case kTVMArgFloat: return "float";
    case kTVMOpaqueHandle: return "handle";
    case kTVMNullptr: return "null";
    case kTVMDataType: return "dtype";
    case kDLDevice: return "device";
    case kTVMDLTensorHandle: return "DLTensor*";
    case kTVMObjectHandle: return "object";
    case kTVMModuleHandle: return "module";
    case kTVMPackedFuncHandle: return "function";
    case kTVMStr: return "str";
    case kTVMBytes: return "bytes";
    case kTVMNDArrayHandle: return "NDArray";
    case kTVMObjectRValueRefArg: return "object&&";
    case kTVMArgBool: return "bool";
    default: return "unknown";
  }
}

// ---- last error (thread-local, as TVMGetLastError) ----
namespace {
struct LastError {
  std::string message;
  ErrorKind kind = ErrorKind::kInvalidArgument;
  void* python_error = nullptr;  // set by TVMAPISetLastPythonError, not owned
};
LastError& last_error_storage() {
  thread_local LastError error;
  return error;
}
// Advanced by every set_last_error: tells a kernel's fresh report from an earlier one.
thread_local uint64_t last_error_counter = 0;
// The byte array TVMFuncCall hands out for kTVMBytes returns.
TVMByteArray& returned_bytes() {
  thread_local TVMByteArray bytes;
  return bytes;
}
// TVM code reports errors as "<Python exception class>: message" and TVM's
// bindings pick the class from that prefix; the same prefix picks the kind.
// Kernels' own messages ("Assert fail: ...") have none: input they reject.
ErrorKind kind_from_tvm_prefix(const std::string& message) {
  static const std::pair<const char*, ErrorKind> prefixes[] = {
      {"ValueError: ", ErrorKind::kInvalidArgument},
      {"KeyError: ", ErrorKind::kNotFound},
      {"AttributeError: ", ErrorKind::kNotFound},
      {"FileNotFoundError: ", ErrorKind::kNotFound},
      {"IndexError: ", ErrorKind::kOutOfRange},
      {"NotImplementedError: ", ErrorKind::kUnsupported},
      {"MemoryError: ", ErrorKind::kResourceExhausted},
      {"TypeError: ", ErrorKind::kTypeMismatch},
      {"InternalError: ", ErrorKind::kInternal},
  };
  for (const auto& p : prefixes) {
    if (message.compare(0, std::strlen(p.first), p.first) == 0) return p.second;
  }
  return ErrorKind::kInvalidArgument;
}
}  // namespace
const std::string& last_error() { return last_error_storage().message; }
ErrorKind last_error_kind() { return last_error_storage().kind; }
void set_last_error_from_tvm(const std::string& message) { set_last_error(message, kind_from_tvm_prefix(message)); }
uint64_t last_error_generation() { return last_error_counter; }
Error kernel_failure(const std::string& function, uint64_t generation_before) {
  if (last_error_counter == generation_before || last_error_storage().message.empty())
    return Error("kernel " + quote_untrusted(function) + " failed without a message (it returned non-zero without calling "
                 "TVMAPISetLastError)");
  return last_error_as_exception();
}
void set_last_error(const std::string& message, ErrorKind kind) {
  ++last_error_counter;
  last_error_storage().message = message;
  last_error_storage().kind = kind;
  last_error_storage().python_error = nullptr;
}
void set_last_python_error(void* py_object, const std::string& message) {
  set_last_error_from_tvm(message);
  last_error_storage().python_error = py_object;
}
void* last_python_error() { return last_error_storage().python_error; }
bool is_returned_byte_array(const TVMByteArray* bytes) { return bytes == &returned_bytes(); }

// ---- TVMArgs ----
void TVMArgs::expect(int i, std::initializer_list<int> codes, const char* what) const {
  if (i < 0 || i >= size_)
    throw Error(ErrorKind::kTypeMismatch,
                "argument " + std::to_string(i) + " missing: expected " + what + ", call has " +
                std::to_string(size_) + " arguments");
  for (int c : codes) {
    if (codes_[i] == c) return;
  }
  throw Error(ErrorKind::kTypeMismatch,
              "argument " + std::to_string(i) + ": expected " + what + ", got " + type_code_name(codes_[i]) +
              " (type code " + std::to_string(codes_[i]) + ")");
}

int64_t TVMArgs::as_int(int i) const {
  expect(i, {kTVMArgInt, kTVMArgBool}, "int");
  return values_[i].v_int64;
}

double TVMArgs::as_float(int i) const {
  expect(i, {kTVMArgFloat, kTVMArgInt, kTVMArgBool}, "float");
  return codes_[i] == kTVMArgFloat ? values_[i].v_float64 : static_cast<double>(values_[i].v_int64);
}

std::string TVMArgs::as_string(int i) const {
  expect(i, {kTVMStr, kTVMBytes}, "str");
  if (codes_[i] == kTVMStr) return values_[i].v_str ? values_[i].v_str : "";
  auto* bytes = static_cast<const TVMByteArray*>(values_[i].v_handle);
  if (!bytes) return "";
  return std::string(bytes->data, bytes->size);
}

void* TVMArgs::as_handle(int i) const {
  expect(i, {kTVMOpaqueHandle, kTVMNullptr}, "handle");
  return codes_[i] == kTVMNullptr ? nullptr : values_[i].v_handle;
}

DLTensor* TVMArgs::as_tensor(int i) const {
  expect(i, {kTVMDLTensorHandle, kTVMNDArrayHandle}, "tensor");
  auto* t = static_cast<DLTensor*>(values_[i].v_handle);
  if (!t) throw Error("argument " + std::to_string(i) + ": null tensor");
  return t;
}

NDArray TVMArgs::as_ndarray(int i) const {
  DLTensor* t = as_tensor(i);
  if (codes_[i] == kTVMNDArrayHandle) return NDArray::borrow_handle(t);
  // A plain DLTensor has no owner: wrap it without taking ownership.
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  NDArray a = NDArray::wrap(static_cast<char*>(t->data) + t->byte_offset, shape, t->dtype, t->device, nullptr);
  return a;
}

DLDevice TVMArgs::as_device(int i) const {
  expect(i, {kDLDevice}, "device");
  return values_[i].v_device;
}

DLDataType TVMArgs::as_dtype(int i) const {
  expect(i, {kTVMDataType, kTVMStr}, "dtype");
  if (codes_[i] == kTVMStr) return dtype_from_string(values_[i].v_str);
  return values_[i].v_type;
}

Module TVMArgs::as_module(int i) const {
  expect(i, {kTVMModuleHandle}, "module");
  return Module(static_cast<ModuleNode*>(values_[i].v_handle));
}

Ref<FunctionNode> TVMArgs::as_function(int i) const {
  expect(i, {kTVMPackedFuncHandle}, "function");
  return Ref<FunctionNode>(static_cast<FunctionNode*>(values_[i].v_handle));
}

Ref<Object> TVMArgs::as_object(int i) const {
  expect(i, {kTVMObjectHandle, kTVMModuleHandle, kTVMPackedFuncHandle}, "object");
  return Ref<Object>(static_cast<Object*>(values_[i].v_handle));
}

// ---- RetValue ----
RetValue::RetValue(const RetValue& other) {
  value_.v_handle = nullptr;
  copy_from(other);
}
RetValue& RetValue::operator=(const RetValue& other) {
  if (this != &other) {
    clear();
    copy_from(other);
  }
  return *this;
}
RetValue::RetValue(RetValue&& other) noexcept { *this = std::move(other); }
RetValue& RetValue::operator=(RetValue&& other) noexcept {
  if (this == &other) return *this;
  clear();
  code_ = other.code_;
  value_ = other.value_;
  str_ = std::move(other.str_);
  if (code_ == kTVMStr) value_.v_str = str_.c_str();
  if (code_ == kTVMBytes) {
    bytes_ = TVMByteArray{str_.data(), str_.size()};
    value_.v_handle = &bytes_;
  }
  other.code_ = kTVMNullptr;
  other.value_.v_handle = nullptr;
  return *this;
}
RetValue::~RetValue() { clear(); }

void RetValue::copy_from(const RetValue& other) {
  switch (other.code_) {
    case kTVMStr: set_string(other.str_); return;
    case kTVMBytes: set_bytes(other.str_); return;
    case kTVMNDArrayHandle: set_ndarray(NDArray::borrow_handle(static_cast<DLTensor*>(other.value_.v_handle))); return;
    case kTVMModuleHandle:
    case kTVMPackedFuncHandle:
    case kTVMObjectHandle:
      static_cast<Object*>(other.value_.v_handle)->inc_ref();
      break;
    default: break;
  }
  code_ = other.code_;
  value_ = other.value_;
}

void RetValue::clear() {
  switch (code_) {
    case kTVMNDArrayHandle: NDArray::adopt_handle(static_cast<DLTensor*>(value_.v_handle)); break;
    case kTVMModuleHandle:
    case kTVMPackedFuncHandle:
    case kTVMObjectHandle: static_cast<Object*>(value_.v_handle)->dec_ref(); break;
    default: break;
  }
  code_ = kTVMNullptr;
  value_.v_handle = nullptr;
  str_.clear();
}

void RetValue::set_none() { clear(); }
void RetValue::set_int(int64_t v) { clear(); code_ = kTVMArgInt; value_.v_int64 = v; }
void RetValue::set_bool(bool v) { clear(); code_ = kTVMArgBool; value_.v_int64 = v; }
void RetValue::set_float(double v) { clear(); code_ = kTVMArgFloat; value_.v_float64 = v; }
void RetValue::set_handle(void* v) { clear(); code_ = v ? kTVMOpaqueHandle : kTVMNullptr; value_.v_handle = v; }
void RetValue::set_device(DLDevice d) { clear(); code_ = kDLDevice; value_.v_device = d; }
void RetValue::set_dtype(DLDataType t) { clear(); code_ = kTVMDataType; value_.v_type = t; }
void RetValue::set_string(std::string s) {
  clear();
  str_ = std::move(s);
  code_ = kTVMStr;
  value_.v_str = str_.c_str();
}
void RetValue::set_bytes(std::string s) {
  clear();
  str_ = std::move(s);
  code_ = kTVMBytes;
  bytes_ = TVMByteArray{str_.data(), str_.size()};
  value_.v_handle = &bytes_;
}
void RetValue::set_ndarray(NDArray a) {
  clear();
  if (!a.defined()) return;
  code_ = kTVMNDArrayHandle;
  value_.v_handle = a.release();
}
void RetValue::set_module(Module m) {
  clear();
  if (!m) return;
  code_ = kTVMModuleHandle;
  value_.v_handle = m.release();
}
void RetValue::set_function(Ref<FunctionNode> f) {
  clear();
  if (!f) return;
  code_ = kTVMPackedFuncHandle;
  value_.v_handle = f.release();
}
void RetValue::set_object(Ref<Object> o) {
  clear();
  if (!o) return;
  code_ = kTVMObjectHandle;
  value_.v_handle = o.release();
}

void RetValue::set_arg(const TVMArgs& args, int i) {
  const TVMValue& value = args.value(i);
  switch (args.code(i)) {
    case kTVMArgInt: set_int(value.v_int64); break;
    case kTVMArgBool: set_bool(value.v_int64 != 0); break;
    case kTVMArgFloat: set_float(value.v_float64); break;
    case kTVMStr: set_string(args.as_string(i)); break;
    case kTVMBytes: set_bytes(args.as_string(i)); break;
    case kTVMNDArrayHandle: set_ndarray(args.as_ndarray(i)); break;
    case kTVMModuleHandle: set_module(args.as_module(i)); break;
    case kTVMPackedFuncHandle: set_function(args.as_function(i)); break;
    case kTVMObjectHandle: set_object(args.as_object(i)); break;
    case kDLDevice: set_device(value.v_device); break;
    case kTVMDataType: set_dtype(value.v_type); break;
    case kTVMNullptr: set_none(); break;
    default: set_handle(value.v_handle); break;
  }
}

Module RetValue::as_module() const { return as_args().as_module(0); }
Ref<FunctionNode> RetValue::as_function() const { return as_args().as_function(0); }

void RetValue::release_to_c(TVMValue* value, int* code) {
  thread_local std::string str_storage;
  TVMByteArray& bytes_storage = returned_bytes();
  *code = code_;
  if (code_ == kTVMStr) {
    str_storage = std::move(str_);
    value->v_str = str_storage.c_str();
  } else if (code_ == kTVMBytes) {
    str_storage = std::move(str_);
    bytes_storage = TVMByteArray{str_storage.data(), str_storage.size()};
    value->v_handle = &bytes_storage;
  } else {
    *value = value_;
  }
  code_ = kTVMNullptr;  // ownership of objects moved to the receiver
  value_.v_handle = nullptr;
  str_.clear();
}

// ---- FunctionNode ----
FunctionNode::FunctionNode(TVMBackendPackedCFunc cfunc, std::string name, Ref<Object> owner)
    : cfunc_(cfunc), name_(std::move(name)), owner_(std::move(owner)) {}

FunctionNode::FunctionNode(FfiSafeCall ffi_func, std::string name, Ref<Object> owner)
    : ffi_func_(ffi_func.address), name_(std::move(name)), owner_(std::move(owner)) {}

void FunctionNode::call(const TVMArgs& args, RetValue* ret) const {
  if (body_) {
    body_(args, ret);
    return;
  }
  if (ffi_func_) return ffi_call_packed(reinterpret_cast<TVMFFISafeCallType>(ffi_func_), name_, args, ret);
  TVMValue ret_value;
  ret_value.v_handle = nullptr;
  int ret_code = kTVMNullptr;
  const uint64_t generation = last_error_generation();
  int rc = cfunc_(const_cast<TVMValue*>(args.values()), const_cast<int*>(args.codes()), args.size(), &ret_value,
                  &ret_code, nullptr);
  if (rc != 0) {
    if (last_error_generation() == generation) throw kernel_failure(name_, generation);
    throw last_error_as_exception().with("function", name_);
  }
  switch (ret_code) {
    case kTVMArgInt: ret->set_int(ret_value.v_int64); break;
    case kTVMArgBool: ret->set_bool(ret_value.v_int64 != 0); break;
    case kTVMArgFloat: ret->set_float(ret_value.v_float64); break;
    case kTVMOpaqueHandle: ret->set_handle(ret_value.v_handle); break;
    default: break;
  }
}

// ---- ArgList ----
ArgList& ArgList::push(TVMValue value, int code) {
  values_.push_back(value);
  codes_.push_back(code);
  return *this;
}
ArgList& ArgList::add_int(int64_t v) {
  TVMValue x;
  x.v_int64 = v;
  return push(x, kTVMArgInt);
}
ArgList& ArgList::add_float(double v) {
  TVMValue x;
  x.v_float64 = v;
  return push(x, kTVMArgFloat);
}
ArgList& ArgList::add_string(const std::string& s) {
  strings_.push_back(std::make_unique<std::string>(s));
  TVMValue x;
  x.v_str = strings_.back()->c_str();
  return push(x, kTVMStr);
}
ArgList& ArgList::add_tensor(DLTensor* t) {
  TVMValue x;
  x.v_handle = t;
  return push(x, kTVMDLTensorHandle);
}
ArgList& ArgList::add_ndarray(const NDArray& a) {
  arrays_.push_back(a);
  TVMValue x;
  x.v_handle = a.handle();
  return push(x, kTVMNDArrayHandle);
}
ArgList& ArgList::add_device(DLDevice d) {
  TVMValue x;
  x.v_device = d;
  return push(x, kDLDevice);
}
ArgList& ArgList::add_handle(void* p) {
  TVMValue x;
  x.v_handle = p;
  return push(x, p ? kTVMOpaqueHandle : kTVMNullptr);
}
ArgList& ArgList::add_module(const Module& m) {
  modules_.push_back(m);
  TVMValue x;
  x.v_handle = m.get();
  return push(x, kTVMModuleHandle);
}

RetValue call_with_values(const PackedFunc& f, const std::vector<RetValue>& args) {
  if (!f) throw Error(ErrorKind::kFailedPrecondition, "call of a null function");
  std::vector<TVMValue> values;
  std::vector<int> codes;
  values.reserve(args.size());
  codes.reserve(args.size());
  for (const RetValue& a : args) {
    values.push_back(a.value());
    codes.push_back(a.code());
  }
  RetValue ret;
  f->call(TVMArgs(values.data(), codes.data(), static_cast<int>(values.size())), &ret);
  return ret;
}

RetValue call_function(const PackedFunc& f, const ArgList& args) {
  if (!f) throw Error(ErrorKind::kFailedPrecondition, "call of a null function");
  RetValue ret;
  f->call(args.args(), &ret);
  return ret;
}

}  // namespace graphrt
