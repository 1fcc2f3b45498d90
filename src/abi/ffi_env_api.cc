// The tvm-ffi C functions that code TVM v0.22+ generates calls: by name (the
// error setters every kernel imports) or through the context slots the loader
// fills (`__TVMFFIFunctionCall`, `__TVMFFIEnvModLookupFromImports`,
// `__TVMFFIHandleInitOnce`). Exported under tvm-ffi's names so a dlopen'ed
// kernel library resolves them from the process.
#include <atomic>
#include <mutex>
#include <string>

#include "abi/c_api_support.h"
#include "abi/ffi_abi.h"
#include "abi/ffi_convention.h"
#include "abi/ffi_env_api.h"
#include "graphrt/module.h"

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

// A tvm-ffi error kind ("ValueError") and message as graphrt's last error;
// the kind maps as TVM's Python-style class prefixes do.
void set_raised(const char* kind, const std::string& message) {
  graphrt::set_last_error_from_tvm(std::string(kind && *kind ? kind : "RuntimeError") + ": " + message);
}

}  // namespace

extern "C" GRAPHRT_API void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  set_raised(kind, message ? message : "");
}

extern "C" GRAPHRT_API void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts,
                                                              int32_t num_parts) {
  std::string message;
  for (int32_t i = 0; message_parts && i < num_parts; ++i)
    if (message_parts[i]) message += message_parts[i];
  set_raised(kind, message);
}

// `func` is a FunctionNode handed out by TVMFFIEnvModLookupFromImports.
extern "C" GRAPHRT_API int TVMFFIFunctionCall(void* func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return graphrt::c_api_guard([&] {
    if (!func) throw Error("TVMFFIFunctionCall: null function handle");
    graphrt::FfiArgsAsPacked packed(args, num_args);
    graphrt::RetValue ret;
    static_cast<graphrt::FunctionNode*>(func)->call(packed.args(), &ret);
    if (result) graphrt::ret_value_to_ffi(ret, result);
  });
}

// `library_ctx` is the module the loader stored in `__tvm_ffi__library_ctx`;
// the function found stays owned (and cached) by it.
extern "C" GRAPHRT_API int TVMFFIEnvModLookupFromImports(void* library_ctx, const char* func_name, void** out) {
  return graphrt::c_api_guard([&] {
    if (!library_ctx)
      throw Error(ErrorKind::kFailedPrecondition,
                  "TVMFFIEnvModLookupFromImports: the library's __tvm_ffi__library_ctx is not set");
    if (!func_name || !out) throw Error("TVMFFIEnvModLookupFromImports: null name or result");
    *out = static_cast<graphrt::ModuleNode*>(library_ctx)->get_func_from_env(func_name);
  });
}

extern "C" GRAPHRT_API int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result)) {
  auto* slot = reinterpret_cast<std::atomic<void*>*>(handle_addr);
  if (slot->load(std::memory_order_acquire)) return 0;
  static std::mutex init_mutex;
  std::lock_guard<std::mutex> lock(init_mutex);
  if (slot->load(std::memory_order_acquire)) return 0;
  void* made = nullptr;
  if (const int rc = init_func(&made)) return rc;
  if (!made) {
    graphrt::set_last_error("TVMFFIHandleInitOnce: the initialiser returned no handle");
    return -1;
  }
  slot->store(made, std::memory_order_release);
  return 0;
}
