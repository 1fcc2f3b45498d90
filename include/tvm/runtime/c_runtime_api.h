/* TVM's C runtime API (v0.16-v0.18) as graphrt implements it.
 *
 * Same file name, type names, enum values and function signatures as TVM's
 * header of the same path, so C and C++ code written against TVM includes
 * this one unchanged and links against libgraphrt instead of libtvm_runtime.
 * Every int-returning function returns 0 on success and nonzero on failure;
 * TVMGetLastError() then says why (per thread). graphrt's own additions are
 * in graphrt/c_api.h. */
#ifndef TVM_RUNTIME_C_RUNTIME_API_H_
#define TVM_RUNTIME_C_RUNTIME_API_H_

#ifdef _MSC_VER
#define TVM_WEAK __declspec(selectany)
#else
#define TVM_WEAK __attribute__((weak))
#endif

#if defined(__GNUC__)
#define TVM_ATTRIBUTE_UNUSED __attribute__((unused))
#else
#define TVM_ATTRIBUTE_UNUSED
#endif

/* TVM's export macro name, spelled through graphrt's one export macro. */
#ifndef TVM_DLL
#include "graphrt/export.h"
#define TVM_DLL GRAPHRT_API
#endif

/* The TVM release whose ABI this header follows. */
#define TVM_VERSION "0.18.0"

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int64_t tvm_index_t;

/* Device types TVM adds to DLPack's (numbered well above DLPack's own). */
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLAOCL = 32,
  kDLSDAccel = 33,
  kOpenGL = 34,
  kDLMicroDev = 35,
  TVMDeviceExtType_End = 36
} TVMDeviceExtType;

/* Type codes of packed-call arguments and return values. Generated code
 * hard-codes these numbers. */
typedef enum {
  kTVMArgInt = kDLInt,
  kTVMArgFloat = kDLFloat,
  kTVMOpaqueHandle = 3U,
  kTVMNullptr = 4U,
  kTVMDataType = 5U,
  kDLDevice = 6U,
  kTVMDLTensorHandle = 7U,
  kTVMObjectHandle = 8U,
  kTVMModuleHandle = 9U,
  kTVMPackedFuncHandle = 10U,
  kTVMStr = 11U,
  kTVMBytes = 12U,
  kTVMNDArrayHandle = 13U,
  kTVMObjectRValueRefArg = 14U,
  kTVMArgBool = 15U,
  kTVMExtBegin = 16U,
  kTVMNNVMFirst = 16U,
  kTVMNNVMLast = 20U,
  kTVMExtReserveEnd = 64U,
  kTVMExtEnd = 128U
} TVMArgTypeCode;

typedef DLTensor* TVMArrayHandle;

/* One packed value: 8 bytes, interpreted by its type code. */
typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} TVMValue;

/* The payload of a kTVMBytes value. */
typedef struct {
  const char* data;
  size_t size;
} TVMByteArray;

typedef void* TVMModuleHandle;
typedef void* TVMFunctionHandle;
typedef void* TVMRetValueHandle;
typedef void* TVMStreamHandle; /* NULL: the device's default stream */
typedef void* TVMObjectHandle;

/* ---- errors ---- */
TVM_DLL void TVMAPISetLastError(const char* msg);
/* Records a Python exception object (not owned; the caller keeps it alive
 * until TVMDropLastPythonError) as this thread's last error. */
TVM_DLL void TVMAPISetLastPythonError(void* py_object);
/* The object recorded by TVMAPISetLastPythonError, or NULL. */
TVM_DLL void* TVMGetLastPythonError(void);
TVM_DLL const char* TVMGetLastError(void);
/* Backtrace of the last error, or NULL when it has none (graphrt's errors
 * carry context pairs in the message instead of a backtrace). */
TVM_DLL const char* TVMGetLastBacktrace(void);
/* Forgets a recorded Python exception object. */
TVM_DLL void TVMDropLastPythonError(void);
/* For C++ callers only: throws this thread's last error message as a C++
 * exception (tvm::Error, which is graphrt::Error). Never call it from C. */
TVM_DLL void TVMThrowLastError(void);

/* ---- modules ---- */
TVM_DLL int TVMModLoadFromFile(const char* file_name, const char* format, TVMModuleHandle* out);
TVM_DLL int TVMModImport(TVMModuleHandle mod, TVMModuleHandle dep);
/* *out is NULL (and 0 returned) when the module has no such function. */
TVM_DLL int TVMModGetFunction(TVMModuleHandle mod, const char* func_name, int query_imports,
                              TVMFunctionHandle* out);
TVM_DLL int TVMModFree(TVMModuleHandle mod);

/* ---- packed functions ---- */
TVM_DLL int TVMFuncFree(TVMFunctionHandle func);
/* Returned object handles carry one reference for the caller; returned
 * strings and byte arrays live in per-thread storage until the next call. */
TVM_DLL int TVMFuncCall(TVMFunctionHandle func, TVMValue* arg_values, int* type_codes, int num_args,
                        TVMValue* ret_val, int* ret_type_code);
TVM_DLL int TVMCFuncSetReturn(TVMRetValueHandle ret, TVMValue* value, int* type_code, int num_ret);
/* Turns a callback argument into a value the callback may hand on as its
 * own: object handles gain a reference, moved objects are taken over. */
TVM_DLL int TVMCbArgToReturn(TVMValue* value, int* code);

typedef int (*TVMPackedCFunc)(TVMValue* args, int* type_codes, int num_args, TVMRetValueHandle ret,
                              void* resource_handle);
typedef void (*TVMPackedCFuncFinalizer)(void* resource_handle);
typedef int (*TVMExtensionFuncDeclarer)(TVMFunctionHandle register_func_handle);

TVM_DLL int TVMFuncCreateFromCFunc(TVMPackedCFunc func, void* resource_handle, TVMPackedCFuncFinalizer fin,
                                   TVMFunctionHandle* out);
TVM_DLL int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override);
TVM_DLL int TVMFuncGetGlobal(const char* name, TVMFunctionHandle* out);
TVM_DLL int TVMFuncListGlobalNames(int* out_size, const char*** out_array);
TVM_DLL int TVMFuncRemoveGlobal(const char* name);

/* ---- arrays ---- */
TVM_DLL int TVMArrayAlloc(const tvm_index_t* shape, int ndim, int dtype_code, int dtype_bits, int dtype_lanes,
                          int device_type, int device_id, TVMArrayHandle* out);
TVM_DLL int TVMArrayFree(TVMArrayHandle handle);
TVM_DLL int TVMArrayCopyFromBytes(TVMArrayHandle handle, void* data, size_t nbytes);
TVM_DLL int TVMArrayCopyToBytes(TVMArrayHandle handle, void* data, size_t nbytes);
TVM_DLL int TVMArrayCopyFromTo(TVMArrayHandle from, TVMArrayHandle to, TVMStreamHandle stream);
TVM_DLL int TVMArrayFromDLPack(DLManagedTensor* from, TVMArrayHandle* out);
TVM_DLL int TVMArrayToDLPack(TVMArrayHandle from, DLManagedTensor** out);
TVM_DLL void TVMDLManagedTensorCallDeleter(DLManagedTensor* dltensor);

/* ---- streams ---- */
TVM_DLL int TVMStreamCreate(int device_type, int device_id, TVMStreamHandle* out);
TVM_DLL int TVMStreamFree(int device_type, int device_id, TVMStreamHandle stream);
TVM_DLL int TVMSetStream(int device_type, int device_id, TVMStreamHandle handle);
TVM_DLL int TVMSynchronize(int device_type, int device_id, TVMStreamHandle stream);
/* Work queued on `dst` after this call starts after the work on `src`. */
TVM_DLL int TVMStreamStreamSynchronize(int device_type, int device_id, TVMStreamHandle src,
                                       TVMStreamHandle dst);

/* ---- objects ---- */
/* Type indices follow TVM's static ones (0 runtime.Object, 1 runtime.Module,
 * 2 runtime.NDArray, ..., 7 runtime.PackedFunc). */
TVM_DLL int TVMObjectGetTypeIndex(TVMObjectHandle obj, unsigned* out_tindex);
TVM_DLL int TVMObjectTypeKey2Index(const char* type_key, unsigned* out_tindex);
/* *out_type_key points at per-thread storage until the next call. */
TVM_DLL int TVMObjectTypeIndex2Key(unsigned tindex, char** out_type_key);
TVM_DLL int TVMObjectRetain(TVMObjectHandle obj);
TVM_DLL int TVMObjectFree(TVMObjectHandle obj);
TVM_DLL int TVMObjectDerivedFrom(uint32_t child_type_index, uint32_t parent_type_index, int* is_derived);
/* Releases a TVMByteArray that TVMFuncCall returned (a no-op for the
 * per-thread one it hands out). */
TVM_DLL int TVMByteArrayFree(TVMByteArray* arr);

/* ---- device memory ---- */
TVM_DLL int TVMDeviceAllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment, DLDataType type_hint,
                                    void** out_data);
/* mem_scope NULL or "global": plain device memory for a compact tensor of
 * `shape` and `dtype`; other scopes are refused with an error naming them. */
TVM_DLL int TVMDeviceAllocDataSpaceWithScope(DLDevice dev, int ndim, const int64_t* shape, DLDataType dtype,
                                             const char* mem_scope, void** out_data);
TVM_DLL int TVMDeviceFreeDataSpace(DLDevice dev, void* ptr);
TVM_DLL int TVMDeviceCopyDataFromTo(DLTensor* from, DLTensor* to, TVMStreamHandle stream);

#ifdef __cplusplus
}
#endif

#endif /* TVM_RUNTIME_C_RUNTIME_API_H_ */
