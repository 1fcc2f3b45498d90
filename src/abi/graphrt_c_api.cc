// graphrt's own C API of the core (include/graphrt/c_api.h, the graphrt_* names beside TVM's):
// loading with graphrt's loaders and flags, module introspection, array views, device
// availability, threads, errors, version and logging. The session's and the language model's
// C APIs are defined in their layers (session/c_api_session.cc, llm/c_api/).
#include "layer_api/user_mistakes.h"
#include "graphrt/c_api.h"
#include "graphrt/log.h"

#include <cstring>

#include "abi/c_api_support.h"
#include "graphrt/runtime.h"
#include "abi/object_types.h"
#include "threading/thread_pool.h"
#include "abi/c_handles.h"

using namespace graphrt;
using namespace graphrt::c_handles;

extern "C" GRAPHRT_API int graphrt_module_load_with_flags(const char* path, const char* loader, int flags,
                                                    TVMModuleHandle* out) {
  return graphrt_api_guard([&] {
    if (!path) throw Error("null path");
    if (flags & ~GRAPHRT_LOAD_TRUST_EXPORTS) throw Error(ErrorKind::kUnsupported,
                                                         "unknown load flags " + std::to_string(flags));
    LoadOptions options;
    if (loader && *loader) options.loader = loader;
    options.trust_exports = (flags & GRAPHRT_LOAD_TRUST_EXPORTS) != 0;
    *out = load_module(path, options).release();
  });
}

extern "C" GRAPHRT_API int graphrt_module_load(const char* path, const char* loader, TVMModuleHandle* out) {
  return graphrt_module_load_with_flags(path, loader, 0, out);
}

extern "C" GRAPHRT_API int graphrt_module_load_from_memory(const void* data, size_t size, const char* loader,
                                                     TVMModuleHandle* out) {
  return graphrt_api_guard([&] {
    LoadOptions options;
    options.loader = loader && *loader ? loader : "elf";
    *out = load_module_from_memory(static_cast<const uint8_t*>(data), size, options).release();
  });
}

extern "C" GRAPHRT_API int graphrt_module_type_key(TVMModuleHandle mod, const char** out) {
  return graphrt_api_guard([&] { *out = thread_local_string(as_module(mod)->type_key()); });
}

extern "C" GRAPHRT_API int graphrt_module_num_imports(TVMModuleHandle mod, int* out) {
  return graphrt_api_guard([&] { *out = static_cast<int>(as_module(mod)->imports().size()); });
}

extern "C" GRAPHRT_API int graphrt_module_get_import(TVMModuleHandle mod, int index, TVMModuleHandle* out) {
  return graphrt_api_guard([&] {
    const auto& imports = as_module(mod)->imports();
    if (index < 0 || static_cast<size_t>(index) >= imports.size())
      throw Error(ErrorKind::kOutOfRange, "import index " + std::to_string(index) + " out of range (module has " +
                  std::to_string(imports.size()) + " imports)");
    *out = Module(imports[index]).release();
  });
}

extern "C" GRAPHRT_API int graphrt_module_function_names(TVMModuleHandle mod, const char** out) {
  return graphrt_api_guard([&] {
    std::string joined;
    for (const std::string& n : as_module(mod)->function_names()) joined += n + "\n";
    *out = thread_local_string(joined);
  });
}

extern "C" GRAPHRT_API int graphrt_module_usage_hint(TVMModuleHandle mod, const char** out) {
  return graphrt_api_guard([&] { *out = thread_local_string(module_usage_hint(as_module(mod)->type_key())); });
}

extern "C" GRAPHRT_API int graphrt_module_describe(TVMModuleHandle mod, const char** out) {
  return graphrt_api_guard([&] { *out = thread_local_string(describe_module_tree(Module(as_module(mod)))); });
}

extern "C" GRAPHRT_API int graphrt_load_plugin(const char* path) {
  return graphrt_api_guard([&] { load_plugin(path ? path : ""); });
}

extern "C" GRAPHRT_API int graphrt_array_view_at(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code,
                                           int dtype_bits, int dtype_lanes, uint64_t byte_offset, TVMArrayHandle* out) {
  return graphrt_api_guard([&] {
    *out = NDArray::borrow_handle(as_array(handle))
               .view(shape_of(shape, ndim, "graphrt_array_view"), dtype_of(dtype_code, dtype_bits, dtype_lanes),
                     byte_offset)
               .release();
  });
}

extern "C" GRAPHRT_API int graphrt_array_view(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code,
                                        int dtype_bits, int dtype_lanes, TVMArrayHandle* out) {
  return graphrt_array_view_at(handle, shape, ndim, dtype_code, dtype_bits, dtype_lanes, 0, out);
}

namespace {
// An unavailable device is this call's answer, not its failure: the reason
// comes back as text ("" when the device can be used).
std::string device_unavailable_reason(int device_type, int device_id) {
  // A device type number nothing registered is not a DLDeviceType value: ask by number first.
  DeviceAPI* api = device_api_or_null(device_type);
  if (!api) return "no device API for device type " + std::to_string(device_type) + " in this build";
  try {
    api->check_available(DLDevice{static_cast<DLDeviceType>(device_type), device_id});
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}
}  // namespace

extern "C" GRAPHRT_API int graphrt_device_available(int device_type, int device_id, int* available, const char** reason) {
  return graphrt_api_guard([&] {
    std::string why = device_unavailable_reason(device_type, device_id);
    *available = why.empty() ? 1 : 0;
    if (reason) *reason = thread_local_string(why);
  });
}

extern "C" GRAPHRT_API int graphrt_set_num_threads(int n) {
  return graphrt_api_guard([&] { set_num_threads(n); });
}

extern "C" GRAPHRT_API int graphrt_get_num_threads(int* out) {
  return graphrt_api_guard([&] { *out = num_threads(); });
}

extern "C" GRAPHRT_API int graphrt_init(void) {
  return graphrt_api_guard([] { runtime_init(); });
}

// The C names of the kinds are the enum's values.
static_assert(GRAPHRT_ERROR_INVALID_ARGUMENT == static_cast<int>(ErrorKind::kInvalidArgument), "kind code");
static_assert(GRAPHRT_ERROR_NOT_FOUND == static_cast<int>(ErrorKind::kNotFound), "kind code");
static_assert(GRAPHRT_ERROR_OUT_OF_RANGE == static_cast<int>(ErrorKind::kOutOfRange), "kind code");
static_assert(GRAPHRT_ERROR_UNSUPPORTED == static_cast<int>(ErrorKind::kUnsupported), "kind code");
static_assert(GRAPHRT_ERROR_RESOURCE_EXHAUSTED == static_cast<int>(ErrorKind::kResourceExhausted), "kind code");
static_assert(GRAPHRT_ERROR_DEVICE == static_cast<int>(ErrorKind::kDevice), "kind code");
static_assert(GRAPHRT_ERROR_INTERRUPTED == static_cast<int>(ErrorKind::kInterrupted), "kind code");
static_assert(GRAPHRT_ERROR_TYPE_MISMATCH == static_cast<int>(ErrorKind::kTypeMismatch), "kind code");
static_assert(GRAPHRT_ERROR_FAILED_PRECONDITION == static_cast<int>(ErrorKind::kFailedPrecondition), "kind code");
static_assert(GRAPHRT_ERROR_INTERNAL == static_cast<int>(ErrorKind::kInternal), "kind code");

extern "C" GRAPHRT_API int graphrt_last_error_kind(void) { return static_cast<int>(last_error_kind()); }

extern "C" GRAPHRT_API const char* graphrt_version(void) { return "graphrt 0.1.0 (TVM exports: v0.18 graph executor, v0.20 Relax, v0.22-v0.26 tvm-ffi)"; }

extern "C" GRAPHRT_API void graphrt_set_log_callback(graphrt_log_callback callback, void* user_data) {
  // The C callback's level is the LogLevel's number; one trampoline keeps both.
  struct Forward {
    graphrt_log_callback callback;
    void* user_data;
  };
  static Forward forward;
  graphrt::set_log_callback(nullptr, nullptr);  // returns once no call is using `forward`
  forward = Forward{callback, user_data};
  graphrt::set_log_callback(callback ? [](graphrt::LogLevel level, const char* message, void* data) {
    auto* f = static_cast<Forward*>(data);
    f->callback(static_cast<int>(level), message, f->user_data);
  } : graphrt::LogCallback(nullptr), &forward);
}

