#include "abi/ffi_convention.h"

#include <atomic>
#include <cstring>

#include "layer_api/ffi_kernel_call.h"
#include "layer_api/kernel_failure.h"

namespace graphrt {

namespace {

constexpr uint64_t kStrongOne = 1;
constexpr uint64_t kWeakOne = uint64_t{1} << 32;
constexpr int kDeleterStrong = 1;
constexpr int kDeleterWeak = 2;

std::string ffi_type_name(int32_t index) {
  switch (index) {
    case kFfiNone: return "None";
    case kFfiInt: return "int";
    case kFfiBool: return "bool";
    case kFfiFloat: return "float";
    case kFfiOpaquePtr: return "opaque pointer";
    case kFfiDataType: return "DataType";
    case kFfiDevice: return "Device";
    case kFfiDLTensorPtr: return "DLTensor*";
    case kFfiRawStr: return "const char*";
    case kFfiByteArrayPtr: return "ByteArray*";
    case kFfiSmallStr: return "small string";
    case kFfiSmallBytes: return "small bytes";
    case kFfiStr: return "ffi.String";
    case kFfiBytes: return "ffi.Bytes";
    case kFfiError: return "ffi.Error";
    case kFfiFunction: return "ffi.Function";
    case kFfiShape: return "ffi.Shape";
    case kFfiTensor: return "ffi.Tensor";
    case kFfiArray: return "ffi.Array";
    case kFfiMap: return "ffi.Map";
    case kFfiModule: return "ffi.Module";
    default: return "type index " + std::to_string(index);
  }
}

// A packed POD value (no pointer into storage the value owns) as a tvm-ffi value; false for
// any other type code.
bool pod_to_ffi(const TVMValue& v, int code, TVMFFIAny* out) {
  out->zero_padding = 0;
  out->v_int64 = 0;
  switch (code) {
    case kDLInt:
    case kDLUInt: out->type_index = kFfiInt; out->v_int64 = v.v_int64; return true;
    case kTVMArgBool: out->type_index = kFfiBool; out->v_int64 = v.v_int64 != 0; return true;
    case kDLFloat: out->type_index = kFfiFloat; out->v_float64 = v.v_float64; return true;
    case kTVMOpaqueHandle: out->type_index = kFfiOpaquePtr; out->v_ptr = v.v_handle; return true;
    case kTVMNullptr: out->type_index = kFfiNone; return true;
    case kTVMDataType: out->type_index = kFfiDataType; out->v_dtype = v.v_type; return true;
    case kDLDevice: out->type_index = kFfiDevice; out->v_device = v.v_device; return true;
    default: return false;
  }
}

// Packed argument `i` as a tvm-ffi argument. A runtime may always pass a tensor as DLTensor*.
void packed_to_ffi(const TVMArgs& args, int i, TVMFFIAny* out) {
  const TVMValue& v = args.value(i);
  if (pod_to_ffi(v, args.code(i), out)) return;
  switch (args.code(i)) {
    case kTVMDLTensorHandle:
    case kTVMNDArrayHandle:
      out->type_index = v.v_handle ? kFfiDLTensorPtr : kFfiNone;
      out->v_ptr = v.v_handle;
      return;
    case kTVMStr: out->type_index = kFfiRawStr; out->v_c_str = v.v_str; return;
    case kTVMBytes: out->type_index = kFfiByteArrayPtr; out->v_ptr = v.v_handle; return;
    default:
      throw Error(ErrorKind::kTypeMismatch, std::string("a ") + type_code_name(args.code(i)) +
                                                " cannot be passed to a function of the tvm-ffi ABI (TVM v0.22+)")
          .with("argument", std::to_string(i));
  }
}

// The function's result as a packed value; objects are released.
void ffi_result_to_ret(TVMFFIAny* result, RetValue* ret) {
  switch (result->type_index) {
    case kFfiNone: return ret->set_none();
    case kFfiInt: return ret->set_int(result->v_int64);
    case kFfiBool: return ret->set_bool(result->v_int64 != 0);
    case kFfiFloat: return ret->set_float(result->v_float64);
    case kFfiOpaquePtr: return ret->set_handle(result->v_ptr);
    case kFfiDataType: return ret->set_dtype(result->v_dtype);
    case kFfiDevice: return ret->set_device(result->v_device);
    case kFfiRawStr: return ret->set_string(result->v_c_str ? result->v_c_str : "");
    case kFfiSmallStr:
      return ret->set_string(std::string(result->v_bytes, std::min<uint32_t>(result->zero_padding, 8)));
    default: break;
  }
  const int32_t index = result->type_index;
  if (index >= kFfiStaticObjectBegin && result->v_obj) {
    TVMFFIObject* object = result->v_obj;
    if (index == kFfiStr) {
      const auto* bytes = reinterpret_cast<const TVMFFIByteArray*>(object + 1);
      std::string s(bytes->data, bytes->size);
      ffi_object_dec_ref(object);
      return ret->set_string(std::move(s));
    }
    ffi_object_dec_ref(object);
  }
  throw Error(ErrorKind::kUnsupported, "a function of the tvm-ffi ABI returned a " + ffi_type_name(index) +
                                           ", which graphrt does not take from generated code");
}

}  // namespace

void ffi_object_dec_ref(TVMFFIObject* object) {
  auto* count = reinterpret_cast<std::atomic<uint64_t>*>(&object->combined_ref_count);
  const uint64_t before = count->fetch_sub(kStrongOne, std::memory_order_acq_rel);
  if (!object->deleter) return;
  if (before == (kStrongOne | kWeakOne)) return object->deleter(object, kFfiDeleterBoth);
  if ((before & 0xffffffffu) != 1) return;
  object->deleter(object, kDeleterStrong);
  if ((count->fetch_sub(kWeakOne, std::memory_order_acq_rel) >> 32) == 1) object->deleter(object, kDeleterWeak);
}

TVMFFIAny ffi_kernel_invoke(FfiKernel fn, const std::string& name, const TVMFFIAny* args, int n) {
  TVMFFIAny result;
  result.type_index = kFfiNone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  const uint64_t generation = last_error_generation();
  // The kernel's symbol, as for a kernel of the packed convention: callers name their own function.
  if (fn(nullptr, args, n, &result) != 0) {
    if (last_error_generation() == generation) throw kernel_failure(name, generation).with("symbol", name);
    throw last_error_as_exception().with("symbol", name);
  }
  return result;
}

void ffi_kernel_result_to_ret(TVMFFIAny* result, const std::string& name, RetValue* ret) {
  try {
    ffi_result_to_ret(result, ret);
  } catch (Error& e) {
    throw e.with("symbol", name);
  }
}

void ffi_call_packed(TVMFFISafeCallType fn, const std::string& name, const TVMArgs& args, RetValue* ret) {
  CallBuffer<TVMFFIAny> buffer(args.size());
  TVMFFIAny* ffi_args = buffer.data();
  for (int i = 0; i < args.size(); ++i) {
    try {
      packed_to_ffi(args, i, &ffi_args[i]);
    } catch (Error& e) {
      throw e.with("symbol", name);
    }
  }
  TVMFFIAny result = ffi_kernel_invoke(fn, name, ffi_args, args.size());
  ffi_kernel_result_to_ret(&result, name, ret);
}

FfiArgsAsPacked::FfiArgsAsPacked(const TVMFFIAny* args, int32_t num_args) {
  if (num_args < 0) throw Error("a tvm-ffi call with a negative argument count (" + std::to_string(num_args) + ")");
  values_.reserve(num_args);
  codes_.reserve(num_args);
  size_ = num_args;
  for (int32_t i = 0; i < num_args; ++i) {
    const TVMFFIAny& a = args[i];
    TVMValue& v = values_.data()[i];
    int& code = codes_.data()[i];
    v.v_int64 = 0;
    switch (a.type_index) {
      case kFfiNone: code = kTVMNullptr; v.v_handle = nullptr; break;
      case kFfiInt: code = kDLInt; v.v_int64 = a.v_int64; break;
      case kFfiBool: code = kTVMArgBool; v.v_int64 = a.v_int64 != 0; break;
      case kFfiFloat: code = kDLFloat; v.v_float64 = a.v_float64; break;
      case kFfiOpaquePtr: code = kTVMOpaqueHandle; v.v_handle = a.v_ptr; break;
      case kFfiDataType: code = kTVMDataType; v.v_type = a.v_dtype; break;
      case kFfiDevice: code = kDLDevice; v.v_device = a.v_device; break;
      case kFfiDLTensorPtr: code = a.v_ptr ? kTVMDLTensorHandle : kTVMNullptr; v.v_handle = a.v_ptr; break;
      case kFfiRawStr: code = kTVMStr; v.v_str = a.v_c_str; break;
      case kFfiByteArrayPtr: code = kTVMBytes; v.v_handle = a.v_ptr; break;
      case kFfiSmallStr:
        strings_.push_back(std::make_unique<std::string>(a.v_bytes, std::min<uint32_t>(a.zero_padding, 7)));
        code = kTVMStr;
        v.v_str = strings_.back()->c_str();
        break;
      case kFfiStr: {
        const auto* bytes = reinterpret_cast<const TVMFFIByteArray*>(a.v_obj + 1);
        strings_.push_back(std::make_unique<std::string>(bytes->data, bytes->size));
        code = kTVMStr;
        v.v_str = strings_.back()->c_str();
        break;
      }
      case kFfiTensor:  // the DLTensor follows the object header
        code = kTVMDLTensorHandle;
        v.v_handle = reinterpret_cast<DLTensor*>(a.v_obj + 1);
        break;
      default:
        throw Error(ErrorKind::kTypeMismatch, "a tvm-ffi " + ffi_type_name(a.type_index) +
                                                  " argument cannot be passed to a graphrt function")
            .with("argument", std::to_string(i));
    }
  }
}

void ret_value_to_ffi(const RetValue& value, TVMFFIAny* out) {
  if (pod_to_ffi(value.value(), value.code(), out)) return;
  throw Error(ErrorKind::kUnsupported, std::string("a ") + type_code_name(value.code()) +
                                           " result cannot be returned to code of the tvm-ffi ABI");
}

}  // namespace graphrt
