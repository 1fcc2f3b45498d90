// kDLCUDAHost: page-locked host memory from the driver (cuMemHostAlloc), so
// that copies to and from it run as true asynchronous DMA. To the CPU it is
// plain host memory; copies between it and a GPU go through CudaDeviceAPI.
#pragma once

#include <memory>

#include "graphrt/device_api.h"
#include "backends/cuda/cuda_device_api.h"

namespace graphrt {
namespace cuda_backend {

class CudaHostDeviceAPI : public DeviceAPI {
 public:
  explicit CudaHostDeviceAPI(std::shared_ptr<CudaDeviceAPI> cuda) : cuda_(std::move(cuda)) {}

  // Pinned memory needs a working driver: throws kDevice with its reason
  // when there is none (rather than handing out pageable memory).
  void check_available(DLDevice dev) override;
  void* alloc(DLDevice dev, size_t nbytes, size_t alignment) override;
  void free(DLDevice dev, void* ptr) override;
  // Host to host only (a GPU side is CudaDeviceAPI's).
  void copy(const DLTensor* from, DLTensor* to, void* stream) override;
  void* alloc_workspace(DLDevice dev, size_t nbytes) override { return alloc(dev, nbytes, 64); }
  void free_workspace(DLDevice dev, void* ptr) override { free(dev, ptr); }

 private:
  std::shared_ptr<CudaDeviceAPI> cuda_;
};

}  // namespace cuda_backend
}  // namespace graphrt
