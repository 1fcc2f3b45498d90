#include "backends/relax/packed_convention.h"

#include <string>
#include <vector>

#include "src/base/call_buffer/call_buffer.h"
#include "src/layer_api/ffi_kernel_call.h"

namespace graphrt {
namespace relax {

namespace {

struct Encoder {
  TVMValue* values;
  int* codes;

  void set(int i, void* handle, int code) {
    values[i].v_handle = handle;
    codes[i] = code;
  }
  void operator()(int i, const Value& v) {
    switch (v.index()) {
      case kIntValue:
        values[i].v_int64 = std::get<int64_t>(v);
        codes[i] = kDLInt;
        return;
      case kFloatValue:
        values[i].v_float64 = std::get<double>(v);
        codes[i] = kDLFloat;
        return;
      case kDTypeValue:
        values[i].v_type = std::get<DLDataType>(v);
        codes[i] = kTVMDataType;
        return;
      case kStringValue:
        values[i].v_str = std::get<StringRef>(v)->c_str();
        codes[i] = kTVMStr;
        return;
      case kTensorValue:
        return set(i, std::get<NDArray>(v).handle(), kTVMNDArrayHandle);
      case kShapeValue:
        return set(i, std::get<Ref<ShapeObj>>(v).get(), kTVMObjectHandle);
      case kTupleValue:
        return set(i, std::get<Ref<TupleObj>>(v).get(), kTVMObjectHandle);
      case kClosureValue:
        return set(i, std::get<Ref<ClosureObj>>(v).get(), kTVMObjectHandle);
      case kStorageValue:
        return set(i, std::get<Ref<StorageObj>>(v).get(), kTVMObjectHandle);
      case kFunctionValue:
        return set(i, std::get<PackedFunc>(v).get(), kTVMPackedFuncHandle);
      case kStateValue:
        return set(i, std::get<Ref<StateObj>>(v).get(), kTVMObjectHandle);
      default:  // None, and the VM register: packed functions outside the VM get no VM handle
        return set(i, nullptr, kTVMNullptr);
    }
  }
};

Value value_from_object(const Ref<Object>& obj) {
  Object* p = obj.get();
  if (!p) return std::monostate();
  if (auto* s = dynamic_cast<ShapeObj*>(p)) return Ref<ShapeObj>(s);
  if (auto* t = dynamic_cast<TupleObj*>(p)) return Ref<TupleObj>(t);
  if (auto* c = dynamic_cast<ClosureObj*>(p)) return Ref<ClosureObj>(c);
  if (auto* s = dynamic_cast<StorageObj*>(p)) return Ref<StorageObj>(s);
  if (auto* s = dynamic_cast<StateObj*>(p)) return Ref<StateObj>(s);
  throw Error(ErrorKind::kTypeMismatch, std::string("a '") + p->object_type_key() + "' object is not a Relax VM value");
}

// One argument in tvm-ffi's form; false for a VM object (shape, tuple, closure, ...), which a
// kernel of that ABI cannot take: the packed path then says so.
bool ffi_arg(const Value& v, TVMFFIAny* a) {
  switch (v.index()) {
    case kIntValue: ffi_arg_int(a, std::get<int64_t>(v)); return true;
    case kFloatValue: ffi_arg_float(a, std::get<double>(v)); return true;
    case kDTypeValue: ffi_arg_dtype(a, std::get<DLDataType>(v)); return true;
    case kStringValue: ffi_arg_str(a, std::get<StringRef>(v)->c_str()); return true;
    case kTensorValue: ffi_arg_tensor(a, std::get<NDArray>(v).handle()); return true;
    case kNoneValue: ffi_arg_none(a); return true;
    default: return false;
  }
}

// A tvm-ffi kernel called in its own ABI; false (nothing called) when an argument needs the
// packed path.
bool call_ffi_kernel(FfiKernel fn, const PackedFunc& f, const Value* const* args, int num_args, Value* ret) {
  CallBuffer<TVMFFIAny> ffi_args(num_args);
  for (int i = 0; i < num_args; ++i)
    if (!ffi_arg(*args[i], &ffi_args[i])) return false;
  TVMFFIAny result = ffi_kernel_invoke(fn, f->name(), ffi_args.data(), num_args);
  switch (result.type_index) {
    case kFfiNone: *ret = std::monostate(); return true;
    case kFfiInt:
    case kFfiBool: *ret = result.v_int64; return true;
    case kFfiFloat: *ret = result.v_float64; return true;
    default: break;
  }
  RetValue rv;
  ffi_kernel_result_to_ret(&result, f->name(), &rv);
  *ret = rv.is_none() ? Value() : value_from_arg(rv.as_args(), 0);
  return true;
}

void call_generated(TVMBackendPackedCFunc fn, const PackedFunc& f, TVMValue* values, int* codes, int n, Value* ret) {
  TVMValue rv;
  int rcode = kTVMNullptr;
  if (fn(values, codes, n, &rv, &rcode, nullptr) != 0) throw last_error_as_exception().with("symbol", f->name());
  if (rcode == kDLInt || rcode == kTVMArgBool) {
    *ret = rv.v_int64;
  } else if (rcode == kDLFloat) {
    *ret = rv.v_float64;
  } else {
    *ret = std::monostate();
  }
}

}  // namespace

void call_packed(const PackedFunc& f, const Value* const* args, int num_args, Value* ret) {
  if (FfiKernel fn = ffi_kernel_of(*f))
    if (call_ffi_kernel(fn, f, args, num_args, ret)) return;
  CallBuffer<TVMValue> value_buffer(num_args);
  CallBuffer<int> code_buffer(num_args);
  TVMValue* values = value_buffer.data();
  int* codes = code_buffer.data();
  Encoder enc{values, codes};
  for (int i = 0; i < num_args; ++i) enc(i, *args[i]);
  if (TVMBackendPackedCFunc fn = f->backend_c_func()) return call_generated(fn, f, values, codes, num_args, ret);
  RetValue rv;
  f->call(TVMArgs(values, codes, num_args), &rv);
  *ret = rv.is_none() ? Value() : value_from_arg(rv.as_args(), 0);
}

Value value_from_arg(const TVMArgs& args, int i) {
  switch (args.code(i)) {
    case kTVMNullptr:
      return std::monostate();
    case kDLInt:
    case kDLUInt:
    case kTVMArgBool:
      return args.as_int(i);
    case kDLFloat:
      return args.as_float(i);
    case kTVMDataType:
      return args.as_dtype(i);
    case kTVMStr:
    case kTVMBytes:
      return std::make_shared<const std::string>(args.as_string(i));
    case kTVMNDArrayHandle:
    case kTVMDLTensorHandle:
      return args.as_ndarray(i);
    case kTVMObjectHandle:
      return value_from_object(args.as_object(i));
    case kTVMPackedFuncHandle:
      return args.as_function(i);
    default:
      throw Error(ErrorKind::kTypeMismatch, std::string("a value of type ") + type_code_name(args.code(i)) +
                                                " cannot be passed to a Relax VM function")
          .with("argument", std::to_string(i));
  }
}

void value_to_ret(const Value& v, RetValue* ret) {
  switch (v.index()) {
    case kIntValue:
      return ret->set_int(std::get<int64_t>(v));
    case kFloatValue:
      return ret->set_float(std::get<double>(v));
    case kDTypeValue:
      return ret->set_dtype(std::get<DLDataType>(v));
    case kStringValue:
      return ret->set_string(*std::get<StringRef>(v));
    case kTensorValue:
      return ret->set_ndarray(std::get<NDArray>(v));
    case kShapeValue:
      return ret->set_object(std::get<Ref<ShapeObj>>(v));
    case kTupleValue:
      return ret->set_object(std::get<Ref<TupleObj>>(v));
    case kClosureValue:
      return ret->set_object(std::get<Ref<ClosureObj>>(v));
    case kStorageValue:
      return ret->set_object(std::get<Ref<StorageObj>>(v));
    case kFunctionValue:
      return ret->set_function(std::get<PackedFunc>(v));
    case kStateValue:
      return ret->set_object(std::get<Ref<StateObj>>(v));
    default:
      return ret->set_none();
  }
}

}  // namespace relax
}  // namespace graphrt
