/* TVM's C backend API (v0.16-v0.18): what TVM-generated kernels call into the
 * runtime for. Same names and signatures as TVM's header of the same path. */
#ifndef TVM_RUNTIME_C_BACKEND_API_H_
#define TVM_RUNTIME_C_BACKEND_API_H_

#include <tvm/runtime/c_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Signature of every generated host function. */
typedef int (*TVMBackendPackedCFunc)(TVMValue* args, int* type_codes, int num_args, TVMValue* out_ret_value,
                                     int* out_ret_tcode, void* resource_handle);

/* Looks `func_name` up in the imports of the module `mod_node`, then in the
 * global registry. The handle stays owned by the module. */
TVM_DLL int TVMBackendGetFuncFromEnv(void* mod_node, const char* func_name, TVMFunctionHandle* out);
TVM_DLL int TVMBackendRegisterSystemLibSymbol(const char* name, void* ptr);
/* NULL on failure (with the last error set). */
TVM_DLL void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes, int dtype_code_hint,
                                       int dtype_bits_hint);
TVM_DLL int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr);
TVM_DLL int TVMBackendRegisterEnvCAPI(const char* name, void* ptr);

/* Environment of one parallel launch, shared by its tasks. */
typedef struct {
  void* sync_handle;
  int32_t num_task;
} TVMParallelGroupEnv;

typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

/* Runs flambda(task_id, env, cdata) on the thread pool (num_task 0: as many
 * tasks as threads) and waits for all of them. */
TVM_DLL int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task);
TVM_DLL int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv);
/* Runs f(cdata) once per *handle (which starts NULL). */
TVM_DLL int TVMBackendRunOnce(void** handle, int (*f)(void*), void* cdata, int nbytes);

#ifdef __cplusplus
}
#endif

#endif /* TVM_RUNTIME_C_BACKEND_API_H_ */
