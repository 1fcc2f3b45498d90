#include "modules/cuda/register.h"

#include "graphrt/binary_loader.h"
#include "graphrt/device_api.h"
#include "modules/cuda/cuda_device_api.h"
#include "modules/cuda/cuda_host_device_api.h"
#include "modules/cuda/cuda_module.h"

namespace graphrt {
namespace cuda_backend {

void register_backend(Runtime& runtime) {
  runtime.register_device_api(kDLCUDA, cuda_device_api_shared());
  runtime.register_device_api(kDLCUDAHost, std::make_shared<CudaHostDeviceAPI>(cuda_device_api_shared()));
  runtime.register_binary_loader("cuda", [](BlobReader& reader) { return load_cuda_module(reader, cuda_device_api()); });
}

}  // namespace cuda_backend
}  // namespace graphrt
