// The C ABI that TVM-generated code calls (TVM's c_backend_api.h), exported under TVM's
// names for C-codegen/system-lib code and handed to dlopen'd libraries through
// their `__TVM*` context pointers (runtime_symbol below).
#include <cstring>
#include <map>
#include <mutex>

#include "module/library_support.h"
#include "graphrt/device_api.h"
#include "graphrt/library.h"
#include "graphrt/module.h"
#include "graphrt/tvm_abi.h"
#include "abi/backend_anylist.h"
#include "abi/c_api_support.h"
#include "abi/ffi_env_api.h"
#include "abi/float16_abi.h"
#include "module/system_lib.h"
#include "threading/thread_pool.h"

using graphrt::Error;
using graphrt::ErrorKind;


extern "C" GRAPHRT_API void TVMAPISetLastError(const char* msg) { graphrt::set_last_error_from_tvm(msg ? msg : ""); }

extern "C" GRAPHRT_API const char* TVMGetLastError(void) { return graphrt::last_error().c_str(); }

extern "C" GRAPHRT_API int TVMFuncCall(TVMFunctionHandle func, TVMValue* args, int* arg_type_codes, int num_args,
                               TVMValue* ret_val, int* ret_type_code) {
  return graphrt::c_api_guard([&] {
    if (!func) throw Error("TVMFuncCall: null function handle");
    graphrt::RetValue ret;
    static_cast<graphrt::FunctionNode*>(func)->call(graphrt::TVMArgs(args, arg_type_codes, num_args), &ret);
    if (ret_val && ret_type_code) ret.release_to_c(ret_val, ret_type_code);
  });
}

extern "C" GRAPHRT_API int TVMBackendGetFuncFromEnv(void* mod_node, const char* func_name, TVMFunctionHandle* func) {
  return graphrt::c_api_guard([&] {
    if (!mod_node) throw Error(ErrorKind::kFailedPrecondition,
                               "TVMBackendGetFuncFromEnv: the library's module context is not set");
    *func = static_cast<graphrt::ModuleNode*>(mod_node)->get_func_from_env(func_name);
  });
}

extern "C" GRAPHRT_API void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,
                                              int /*dtype_code_hint*/, int /*dtype_bits_hint*/) {
  void* p = nullptr;
  int rc = graphrt::c_api_guard([&] {
    DLDevice dev{static_cast<DLDeviceType>(device_type), device_id};
    p = graphrt::RunningDeviceApis::of(dev)->alloc_workspace(dev, nbytes);
    if (!p) throw Error(ErrorKind::kResourceExhausted,
                        "TVMBackendAllocWorkspace: out of memory for " + std::to_string(nbytes) + " bytes");
  });
  return rc == 0 ? p : nullptr;
}

extern "C" GRAPHRT_API int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  return graphrt::c_api_guard([&] {
    DLDevice dev{static_cast<DLDeviceType>(device_type), device_id};
    graphrt::RunningDeviceApis::of(dev)->free_workspace(dev, ptr);
  });
}

extern "C" GRAPHRT_API int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  return graphrt::thread_pool_launch(flambda, cdata, num_task);
}

extern "C" GRAPHRT_API int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  return graphrt::thread_pool_barrier(task_id, penv);
}

extern "C" GRAPHRT_API int TVMBackendRunOnce(void** handle, int (*f)(void*), void* cdata, int /*nbytes*/) {
  static std::mutex once_mutex;
  std::lock_guard<std::mutex> lock(once_mutex);
  if (*handle == nullptr) {
    *handle = reinterpret_cast<void*>(1);
    return f(cdata);
  }
  return 0;
}

extern "C" GRAPHRT_API int TVMBackendRegisterSystemLibSymbol(const char* name, void* ptr) {
  graphrt::system_lib_register_symbol(name, ptr);
  return 0;
}

extern "C" GRAPHRT_API int TVMBackendRegisterEnvCAPI(const char* name, void* ptr) {
  (void)name;
  (void)ptr;
  return 0;  // graphrt fills context pointers itself; nothing to record
}

namespace graphrt {

namespace {
std::map<std::string, void*> make_runtime_symbol_table() {
  std::map<std::string, void*> table = {
      {"TVMAPISetLastError", reinterpret_cast<void*>(&TVMAPISetLastError)},
      {"TVMGetLastError", reinterpret_cast<void*>(&TVMGetLastError)},
      {"TVMFuncCall", reinterpret_cast<void*>(&TVMFuncCall)},
      {"TVMBackendGetFuncFromEnv", reinterpret_cast<void*>(&TVMBackendGetFuncFromEnv)},
      {"TVMBackendAllocWorkspace", reinterpret_cast<void*>(&TVMBackendAllocWorkspace)},
      {"TVMBackendFreeWorkspace", reinterpret_cast<void*>(&TVMBackendFreeWorkspace)},
      {"TVMBackendParallelLaunch", reinterpret_cast<void*>(&TVMBackendParallelLaunch)},
      {"TVMBackendParallelBarrier", reinterpret_cast<void*>(&TVMBackendParallelBarrier)},
      {"TVMBackendRunOnce", reinterpret_cast<void*>(&TVMBackendRunOnce)},
      {"TVMBackendRegisterSystemLibSymbol", reinterpret_cast<void*>(&TVMBackendRegisterSystemLibSymbol)},
      {"TVMBackendRegisterEnvCAPI", reinterpret_cast<void*>(&TVMBackendRegisterEnvCAPI)},
      {"TVMBackendAnyListSetPackedArg", reinterpret_cast<void*>(&TVMBackendAnyListSetPackedArg)},
      {"TVMBackendAnyListResetItem", reinterpret_cast<void*>(&TVMBackendAnyListResetItem)},
      {"TVMBackendAnyListMoveFromPackedReturn", reinterpret_cast<void*>(&TVMBackendAnyListMoveFromPackedReturn)},
      // tvm-ffi (TVM v0.22+)
      {"TVMFFIErrorSetRaisedFromCStr", reinterpret_cast<void*>(&TVMFFIErrorSetRaisedFromCStr)},
      {"TVMFFIErrorSetRaisedFromCStrParts", reinterpret_cast<void*>(&TVMFFIErrorSetRaisedFromCStrParts)},
      {"TVMFFIFunctionCall", reinterpret_cast<void*>(&TVMFFIFunctionCall)},
      {"TVMFFIEnvModLookupFromImports", reinterpret_cast<void*>(&TVMFFIEnvModLookupFromImports)},
      {"TVMFFIHandleInitOnce", reinterpret_cast<void*>(&TVMFFIHandleInitOnce)},
  };
  for (const auto& helper : float16_abi_symbols()) table.insert(helper);
  return table;
}

const std::map<std::string, void*>& runtime_symbol_table() {
  static const std::map<std::string, void*> table = make_runtime_symbol_table();
  return table;
}
}  // namespace

void* runtime_symbol(const std::string& name) {
  auto it = runtime_symbol_table().find(name);
  return it == runtime_symbol_table().end() ? nullptr : it->second;
}

std::vector<std::string> runtime_symbol_names() {
  std::vector<std::string> names;
  for (const auto& kv : runtime_symbol_table()) names.push_back(kv.first);
  return names;
}

}  // namespace graphrt
