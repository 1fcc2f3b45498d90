#include "backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>

namespace graphrt {
namespace cuda_backend {

std::string format_driver_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string default_driver_path() {
  const char* env = std::getenv("GRAPHRT_CUDA_DRIVER");
  if (env && *env) return env;
  return "libcuda.so.1";
}

std::string CudaDriver::describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &text);
  return std::string(name ? name : "CUDA_ERROR_UNKNOWN") + " (" + std::to_string(r) + "): " +
         (text ? text : "unknown error");
}

namespace {
// cuGetProcAddress as exported before CUDA 12 (4 arguments) and its _v2 (5).
using GetProcV1 = CUresult (*)(const char*, void**, int, unsigned long long);
using GetProcV2 = CUresult (*)(const char*, void**, int, unsigned long long, int*);

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

CudaDriver CudaDriver::load(const std::string& path) {
  CudaDriver d;
  d.path = path;
  d.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!d.handle) {
    const char* why = dlerror();
    d.error = base_name(path) + " not found: " + (why ? why : "dlopen failed") +
              " (is the NVIDIA driver installed? set GRAPHRT_CUDA_DRIVER to its libcuda.so.1)";
    return d;
  }
  auto v1 = reinterpret_cast<GetProcV1>(dlsym(d.handle, "cuGetProcAddress"));
  auto v2 = reinterpret_cast<GetProcV2>(dlsym(d.handle, "cuGetProcAddress_v2"));
  auto resolve = [&](const char* name, const char* fallback) -> void* {
    void* fn = nullptr;
    if (v1) {
      if (v1(name, &fn, kCudaApiVersion, CU_GET_PROC_ADDRESS_LEGACY_STREAM) == CUDA_SUCCESS && fn) return fn;
    } else if (v2) {
      int status = 0;
      if (v2(name, &fn, kCudaApiVersion, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) == CUDA_SUCCESS && fn) return fn;
    }
    return dlsym(d.handle, fallback);
  };
  std::string missing;
#define GRAPHRT_CUDA_RESOLVE(name, fallback, ...)                                       \
  d.name = reinterpret_cast<decltype(d.name)>(resolve(#name, fallback));                \
  if (!d.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  GRAPHRT_CUDA_SYMBOLS(GRAPHRT_CUDA_RESOLVE)
#undef GRAPHRT_CUDA_RESOLVE
  if (!missing.empty()) {
    d.error = base_name(path) + " lacks CUDA driver entry points: " + missing;
    return d;
  }
  CUresult r = d.cuDriverGetVersion(&d.version);
  if (r != CUDA_SUCCESS) {
    d.error = "cuDriverGetVersion failed: " + d.describe(r);
    return d;
  }
  if (d.version < kCudaMinDriverVersion) {
    d.error = "CUDA driver " + format_driver_version(d.version) + " is older than the minimum " +
              format_driver_version(kCudaMinDriverVersion);
    return d;
  }
  return d;
}

}  // namespace cuda_backend
}  // namespace graphrt
