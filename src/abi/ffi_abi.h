// tvm-ffi's C ABI (the library TVM's runtime sits on from v0.22): the value and
// object layouts generated code hard-codes. Only these bytes are tvm-ffi's; the
// conversions to graphrt's values are ffi_convention.h's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graphrt/tvm_abi.h"

extern "C" {

// Every tvm-ffi object starts with this 24-byte header.
typedef struct {
  uint64_t combined_ref_count;  // strong count in the low 32 bits, weak in the high 32
  int32_t type_index;
  uint32_t padding;
  void (*deleter)(void* self, int flags);
} TVMFFIObject;

// A value on the stack: 16 bytes.
typedef struct {
  int32_t type_index;
  uint32_t zero_padding;  // the length of a small string
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    TVMFFIObject* v_obj;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
    uint64_t v_uint64;
  };
} TVMFFIAny;

typedef struct {
  const char* data;
  size_t size;
} TVMFFIByteArray;

typedef int (*TVMFFISafeCallType)(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);

}  // extern "C"

namespace graphrt {

// tvm-ffi's static type indices (its c_api.h TVMFFITypeIndex).
enum FfiTypeIndex : int32_t {
  kFfiNone = 0,
  kFfiInt = 1,
  kFfiBool = 2,
  kFfiFloat = 3,
  kFfiOpaquePtr = 4,
  kFfiDataType = 5,
  kFfiDevice = 6,
  kFfiDLTensorPtr = 7,
  kFfiRawStr = 8,
  kFfiByteArrayPtr = 9,
  kFfiObjectRValueRef = 10,
  kFfiSmallStr = 11,
  kFfiSmallBytes = 12,
  kFfiStaticObjectBegin = 64,
  kFfiStr = 65,
  kFfiBytes = 66,
  kFfiError = 67,
  kFfiFunction = 68,
  kFfiShape = 69,
  kFfiTensor = 70,
  kFfiArray = 71,
  kFfiMap = 72,
  kFfiModule = 73,
};

// The deleter flag that frees an object whose strong and weak counts both reached zero.
constexpr int kFfiDeleterBoth = 3;

static_assert(sizeof(TVMFFIObject) == 24, "tvm-ffi object header is 24 bytes");
static_assert(sizeof(TVMFFIAny) == 16, "tvm-ffi Any is 16 bytes");

}  // namespace graphrt
