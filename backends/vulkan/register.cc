#include "backends/vulkan/register.h"

#include "graphrt/binary_loader.h"
#include "graphrt/device_api.h"
#include "backends/vulkan/vulkan_device_api.h"
#include "backends/vulkan/vulkan_module.h"

namespace graphrt {
namespace vulkan_backend {

// The runtime owns its Vulkan device API: its device table holds it, and so
// does its `vulkan` module loader, whose modules launch on it. TVM writes the
// module as a library module's bytes (v0.22 and later); the record must be
// exactly those bytes.
void register_backend(Runtime& runtime) {
  auto api = std::make_shared<VulkanDeviceAPI>();
  runtime.register_device_api(kDLVulkan, api);
  runtime.register_bytes_loader("vulkan", [api](BlobReader& bytes) { return load_vulkan_module(bytes, api); });
}

}  // namespace vulkan_backend
}  // namespace graphrt
