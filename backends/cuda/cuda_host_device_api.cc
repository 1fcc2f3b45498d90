#include "backends/cuda/cuda_host_device_api.h"

#include <cstring>
#include <string>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"

namespace graphrt {
namespace cuda_backend {

namespace {
// cuMemHostAlloc returns page-aligned memory.
constexpr size_t kPinnedAlignment = 4096;
}  // namespace

// A GPU missing for the current device id is a device failure here, not an
// index out of range: the caller asked for host memory, whose id is not that
// GPU's.
void CudaHostDeviceAPI::check_available(DLDevice dev) {
  (void)dev;
  try {
    cuda_->check_available(DLDevice{kDLCUDA, cuda_->current_device()});
  } catch (Error& e) {
    throw e.with_kind(ErrorKind::kDevice);
  }
}

void* CudaHostDeviceAPI::alloc(DLDevice dev, size_t nbytes, size_t alignment) {
  if (alignment > kPinnedAlignment)
    throw Error(ErrorKind::kUnsupported,
                "pinned host allocations are " + std::to_string(kPinnedAlignment) + "-byte aligned; " +
                    std::to_string(alignment) + " was requested")
        .with("device", device_to_string(dev));
  // The driver needs a current context; PORTABLE pins it for every context.
  cuda_->activate(cuda_->current_device());
  void* p = nullptr;
  cuda_->check(cuda_->driver().cuMemHostAlloc(&p, nbytes ? nbytes : 1, CU_MEMHOSTALLOC_PORTABLE),
               "cuMemHostAlloc of " + std::to_string(nbytes) + " bytes");
  return p;
}

void CudaHostDeviceAPI::free(DLDevice dev, void* ptr) {
  (void)dev;
  if (!ptr) return;
  const CudaDriver& d = cuda_->driver();
  if (d.ok()) d.cuMemFreeHost(ptr);  // errors at exit (deinitialized driver) are of no use
}

void CudaHostDeviceAPI::copy(const DLTensor* from, DLTensor* to, void* stream) {
  (void)stream;
  std::memmove(static_cast<char*>(to->data) + to->byte_offset,
               static_cast<const char*>(from->data) + from->byte_offset, tensor_nbytes(from));
}

}  // namespace cuda_backend
}  // namespace graphrt
