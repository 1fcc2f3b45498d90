#include "backends/cuda/register.h"

#include "graphrt/binary_loader.h"
#include "graphrt/device_api.h"
#include "backends/cuda/cuda_device_api.h"
#include "backends/cuda/cuda_host_device_api.h"
#include "backends/cuda/cuda_module.h"

namespace graphrt {
namespace cuda_backend {

// The runtime owns its CUDA device API: its device table holds it (for
// kDLCUDA and, through the host API, kDLCUDAHost), and so does its `cuda`
// record loader, whose modules launch on it.
void register_backend(Runtime& runtime) {
  auto api = std::make_shared<CudaDeviceAPI>();
  runtime.register_device_api(kDLCUDA, api);
  runtime.register_device_api(kDLCUDAHost, std::make_shared<CudaHostDeviceAPI>(api));
  runtime.register_binary_loader("cuda", [api](BlobReader& reader) { return load_cuda_module(reader, api); });
  runtime.register_bytes_loader("cuda", [api](BlobReader& bytes) {
    Module m = load_cuda_module(bytes, api, CudaPayloadFormat::kWithArgExtraTags);
    if (!bytes.at_end()) throw bytes.error(std::to_string(bytes.remaining()) + " bytes after the cuda module's image");
    return m;
  });
}

}  // namespace cuda_backend
}  // namespace graphrt
