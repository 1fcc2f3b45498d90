/* TVM's packed C calling convention (v0.16-v0.18 ABI), under TVM's exact names.
 *
 * Generated code hard-codes these layouts and codes, so they are part of the
 * binary contract: TVMValue is 8 bytes, type codes are the numbers below. */
#ifndef GRAPHRT_TVM_ABI_H_
#define GRAPHRT_TVM_ABI_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  kTVMArgInt = 0,
  kTVMArgFloat = 2,
  kTVMOpaqueHandle = 3,
  kTVMNullptr = 4,
  kTVMDataType = 5,
  kDLDevice = 6,
  kTVMDLTensorHandle = 7,
  kTVMObjectHandle = 8,
  kTVMModuleHandle = 9,
  kTVMPackedFuncHandle = 10,
  kTVMStr = 11,
  kTVMBytes = 12,
  kTVMNDArrayHandle = 13,
  kTVMObjectRValueRefArg = 14,
  kTVMArgBool = 15,
  kTVMExtBegin = 16
} TVMArgTypeCode;

typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} TVMValue;

typedef struct {
  const char* data;
  size_t size;
} TVMByteArray;

typedef void* TVMModuleHandle;
typedef void* TVMFunctionHandle;
typedef void* TVMRetValueHandle;
typedef void* TVMStreamHandle;
typedef void* TVMObjectHandle;
typedef DLTensor* TVMArrayHandle;
typedef int64_t tvm_index_t;

/* Signature of every generated host function. */
typedef int (*TVMBackendPackedCFunc)(TVMValue* args, int* type_codes, int num_args,
                                     TVMValue* out_ret_value, int* out_ret_tcode,
                                     void* resource_handle);

/* User callback signature for TVMFuncCreateFromCFunc (differs from the above). */
typedef int (*TVMPackedCFunc)(TVMValue* args, int* type_codes, int num_args,
                              TVMRetValueHandle ret, void* resource_handle);
typedef void (*TVMPackedCFuncFinalizer)(void* resource_handle);

typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;

typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHRT_TVM_ABI_H_ */
