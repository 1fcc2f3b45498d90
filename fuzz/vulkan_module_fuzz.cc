// libFuzzer target: the "vulkan" module's bytes (both shader-map layouts) and
// the checks every shader passes before a driver sees it (SPIRV-Tools
// validation, the interface read from the SPIR-V, the function table against
// it). No device is needed or opened.
#include <cstddef>
#include <cstdint>

#include "backends/vulkan/spirv_reflect.h"
#include "backends/vulkan/vulkan_module.h"
#include "graphrt/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    graphrt::BlobReader reader(data, size, "fuzz");
    graphrt::vulkan_backend::VulkanModuleImage image = graphrt::vulkan_backend::decode_vulkan_payload(reader);
    for (const auto& shader : image.smap) {
      try {
        graphrt::vulkan_backend::reflect_spirv(shader.second.words);  // also on words the validator refuses
      } catch (const graphrt::Error&) {
      }
    }
    graphrt::vulkan_backend::check_vulkan_module(std::move(image));
  } catch (const graphrt::Error&) {
  }
  return 0;
}
