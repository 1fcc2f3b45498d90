// tvm-ffi's C functions that generated v0.22+ code calls (ffi_env_api.cc).
#pragma once

#include <cstdint>

#include "abi/ffi_abi.h"
#include "graphrt/export.h"

extern "C" {
GRAPHRT_API void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);
GRAPHRT_API void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts, int32_t num_parts);
GRAPHRT_API int TVMFFIFunctionCall(void* func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);
GRAPHRT_API int TVMFFIEnvModLookupFromImports(void* library_ctx, const char* func_name, void** out);
GRAPHRT_API int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result));
}
