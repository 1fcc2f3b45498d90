/* graphrt's C API: what bindings and other languages use.
 *
 * Every int-returning function returns 0 on success and -1 on failure, with
 * the message from TVMGetLastError() (thread-local). No C++ exception crosses
 * this boundary. Functions named TVM* keep TVM's C runtime API signatures, so
 * code written against TVM's c_runtime_api.h works; graphrt_* are additions. */
#ifndef GRAPHRT_C_API_H_
#define GRAPHRT_C_API_H_

#include "graphrt/tvm_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---- */
const char* TVMGetLastError(void);
void TVMAPISetLastError(const char* msg);

/* ---- modules ---- */
int TVMModLoadFromFile(const char* file, const char* format, TVMModuleHandle* out);
int TVMModImport(TVMModuleHandle mod, TVMModuleHandle dep);
/* *out = NULL (and 0 returned) when the function does not exist. */
int TVMModGetFunction(TVMModuleHandle mod, const char* func_name, int query_imports, TVMFunctionHandle* out);
int TVMModFree(TVMModuleHandle mod);

/* loader: "dlopen" (default when NULL) or "elf" (embedded loader, no dlopen). */
int graphrt_module_load(const char* path, const char* loader, TVMModuleHandle* out);
int graphrt_module_load_from_memory(const void* data, size_t size, const char* loader, TVMModuleHandle* out);
/* Strings below live in thread-local storage until the next call. */
int graphrt_module_type_key(TVMModuleHandle mod, const char** out);
int graphrt_module_num_imports(TVMModuleHandle mod, int* out);
/* Returns a new reference: free it with TVMModFree. */
int graphrt_module_get_import(TVMModuleHandle mod, int index, TVMModuleHandle* out);
/* Newline-separated function names of this module (not its imports). */
int graphrt_module_function_names(TVMModuleHandle mod, const char** out);
/* Indented text of the whole module tree. */
int graphrt_module_describe(TVMModuleHandle mod, const char** out);
int graphrt_load_plugin(const char* path);

/* ---- functions ---- */
int TVMFuncCall(TVMFunctionHandle func, TVMValue* arg_values, int* type_codes, int num_args, TVMValue* ret_val,
                int* ret_type_code);
int TVMFuncFree(TVMFunctionHandle func);
int TVMFuncCreateFromCFunc(TVMPackedCFunc func, void* resource_handle, TVMPackedCFuncFinalizer fin,
                           TVMFunctionHandle* out);
int TVMCFuncSetReturn(TVMRetValueHandle ret, TVMValue* value, int* type_code, int num_ret);
int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override);
int TVMFuncGetGlobal(const char* name, TVMFunctionHandle* out);
int TVMFuncListGlobalNames(int* out_size, const char*** out_array);
int TVMFuncRemoveGlobal(const char* name);
int TVMObjectFree(TVMObjectHandle obj);
int TVMObjectRetain(TVMObjectHandle obj);

/* ---- arrays ---- */
int TVMArrayAlloc(const tvm_index_t* shape, int ndim, int dtype_code, int dtype_bits, int dtype_lanes,
                  int device_type, int device_id, TVMArrayHandle* out);
int TVMArrayFree(TVMArrayHandle handle);
int TVMArrayCopyFromBytes(TVMArrayHandle handle, void* data, size_t nbytes);
int TVMArrayCopyToBytes(TVMArrayHandle handle, void* data, size_t nbytes);
int TVMArrayCopyFromTo(TVMArrayHandle from, TVMArrayHandle to, TVMStreamHandle stream);
int TVMArrayFromDLPack(DLManagedTensor* from, TVMArrayHandle* out);
int TVMArrayToDLPack(TVMArrayHandle from, DLManagedTensor** out);
void TVMDLManagedTensorCallDeleter(DLManagedTensor* dltensor);
/* A view of `handle` with another shape/dtype sharing its memory (new reference). */
int graphrt_array_view(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code, int dtype_bits,
                       int dtype_lanes, TVMArrayHandle* out);

/* ---- devices and streams ---- */
int TVMDeviceAllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment, DLDataType type_hint, void** out_data);
int TVMDeviceFreeDataSpace(DLDevice dev, void* ptr);
int TVMDeviceCopyDataFromTo(DLTensor* from, DLTensor* to, TVMStreamHandle stream);
int TVMStreamCreate(int device_type, int device_id, TVMStreamHandle* out);
int TVMStreamFree(int device_type, int device_id, TVMStreamHandle stream);
int TVMSetStream(int device_type, int device_id, TVMStreamHandle handle);
int TVMSynchronize(int device_type, int device_id, TVMStreamHandle stream);
/* *available = 1 when usable; otherwise *reason says why (thread-local). */
int graphrt_device_available(int device_type, int device_id, int* available, const char** reason);
/* Thread-pool size for parallel kernels (n <= 0: TVM_NUM_THREADS / cores). */
int graphrt_set_num_threads(int n);
int graphrt_get_num_threads(int* out);

/* ---- params (TVM save_param_dict format) ---- */
/* Parses a params blob: *names is newline-separated (thread-local), *arrays an
 * array of *count new NDArray handles (free each with TVMArrayFree, then the
 * array itself with graphrt_free_handle_array). */
int graphrt_params_load(const void* data, size_t size, int* count, const char** names, TVMArrayHandle** arrays);
void graphrt_free_handle_array(TVMArrayHandle* arrays);
/* Serialises `count` named arrays; *out points at thread-local bytes. */
int graphrt_params_save(int count, const char** names, TVMArrayHandle* arrays, const char** out, size_t* out_size);

/* Version string of graphrt and of the TVM ABI it implements. */
const char* graphrt_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHRT_C_API_H_ */
