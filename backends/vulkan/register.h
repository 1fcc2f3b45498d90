// The Vulkan back end's one registration point (called from
// backends/register_all.cc): the "vulkan" module loader and the kDLVulkan
// DeviceAPI. Registering opens nothing; the loader is opened on first use.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace vulkan_backend {

void register_backend(Runtime& runtime);

}  // namespace vulkan_backend
}  // namespace graphrt
