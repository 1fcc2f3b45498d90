// tvm::runtime::DeviceAPI: memory, copies and streams of one device type,
// over graphrt's device APIs (graphrt/device_api.h).
#ifndef TVM_RUNTIME_DEVICE_API_H_
#define TVM_RUNTIME_DEVICE_API_H_

#include <tvm/runtime/c_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>

#include "graphrt/device_api.h"
#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"

namespace tvm {
namespace runtime {

using Device = DLDevice;

constexpr int kAllocAlignment = 64;
constexpr int kTempAllocaAlignment = 64;
constexpr int kMaxStackAlloca = 1024;

class DeviceAPI {
 public:
  // The API of dev's device type; null when missing and allow_missing, else
  // throws a tvm::Error saying why the device cannot be used.
  static DeviceAPI* Get(Device dev, bool allow_missing = false) {
    ::graphrt::DeviceAPI* api = nullptr;
    if (allow_missing) {
      api = ::graphrt::device_api_or_null(dev.device_type);
      if (!api) return nullptr;
    } else {
      api = ::graphrt::device_api(dev);
    }
    static std::mutex mutex;
    static std::map<::graphrt::DeviceAPI*, std::unique_ptr<DeviceAPI>> wrappers;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<DeviceAPI>& slot = wrappers[api];
    if (!slot) slot.reset(new DeviceAPI(api));
    return slot.get();
  }
  static bool NeedSetDevice(int device_type) { return device_type != kDLCPU; }

  void SetDevice(Device dev) { api_->set_device(dev); }
  void* AllocDataSpace(Device dev, size_t nbytes, size_t alignment, DLDataType type_hint) {
    (void)type_hint;
    return api_->alloc(dev, nbytes, alignment);
  }
  // Compact storage for `shape` x `dtype`; only the "global" scope exists.
  void* AllocDataSpace(Device dev, int ndim, const int64_t* shape, DLDataType dtype,
                       const std::string& mem_scope = "") {
    if (!mem_scope.empty() && mem_scope != "global")
      throw ::graphrt::Error(::graphrt::ErrorKind::kUnsupported,
                             "memory scope '" + mem_scope + "' is not supported (graphrt allocates \"global\" only)");
    return api_->alloc(dev, ::graphrt::dtype_bytes(dtype, ::graphrt::shape_numel(shape, ndim)), kAllocAlignment);
  }
  void FreeDataSpace(Device dev, void* ptr) { api_->free(dev, ptr); }
  void* AllocWorkspace(Device dev, size_t nbytes, DLDataType type_hint = {}) {
    (void)type_hint;
    return api_->alloc_workspace(dev, nbytes);
  }
  void FreeWorkspace(Device dev, void* ptr) { api_->free_workspace(dev, ptr); }
  void CopyDataFromTo(DLTensor* from, DLTensor* to, TVMStreamHandle stream) { ::graphrt::copy_tensor(from, to, stream); }
  TVMStreamHandle CreateStream(Device dev) { return api_->create_stream(dev); }
  void FreeStream(Device dev, TVMStreamHandle stream) { api_->free_stream(dev, stream); }
  void StreamSync(Device dev, TVMStreamHandle stream) { api_->synchronize(dev, stream); }
  void SetStream(Device dev, TVMStreamHandle stream) { api_->set_stream(dev, stream); }
  // Orders later work on `dst` after `src` by draining `src`.
  void SyncStreamFromTo(Device dev, TVMStreamHandle src, TVMStreamHandle dst) {
    (void)dst;
    api_->synchronize(dev, src);
  }

 private:
  explicit DeviceAPI(::graphrt::DeviceAPI* api) : api_(api) {}
  ::graphrt::DeviceAPI* api_;
};

// "cpu", "cuda", ... for a DLDeviceType value.
inline const char* DeviceName(int type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLROCM: return "rocm";
    case kDLExtDev: return "ext_dev";
    default: return "unknown";
  }
}
inline const char* DLDeviceType2Str(int type) { return DeviceName(type); }

inline std::ostream& operator<<(std::ostream& os, DLDevice dev) {
  return os << DeviceName(dev.device_type) << ":" << dev.device_id;
}

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_DEVICE_API_H_
