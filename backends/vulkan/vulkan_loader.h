// The Vulkan API, resolved at run time.
//
// graphrt has no link-time Vulkan dependency: the loader (libvulkan.so.1) is
// dlopen'ed on first use and every entry point comes from
// vkGetInstanceProcAddr / vkGetDeviceProcAddr. The system's Vulkan headers are
// used for the types only (VK_NO_PROTOTYPES), so a build runs the same with or
// without a loader on the machine.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <string>

namespace graphrt {
namespace vulkan_backend {

// Entry points reached before an instance exists.
#define GRAPHRT_VK_GLOBAL_SYMBOLS(X) \
  X(vkCreateInstance)                \
  X(vkEnumerateInstanceExtensionProperties)

// Entry points of an instance.
#define GRAPHRT_VK_INSTANCE_SYMBOLS(X)      \
  X(vkDestroyInstance)                      \
  X(vkEnumeratePhysicalDevices)             \
  X(vkGetPhysicalDeviceProperties)          \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)    \
  X(vkGetPhysicalDeviceFeatures)            \
  X(vkEnumerateDeviceExtensionProperties)   \
  X(vkCreateDevice)                         \
  X(vkGetDeviceProcAddr)

// Entry points of a device (vkGetDeviceProcAddr); required.
#define GRAPHRT_VK_DEVICE_SYMBOLS(X) \
  X(vkDestroyDevice)                 \
  X(vkGetDeviceQueue)                \
  X(vkDeviceWaitIdle)                \
  X(vkCreateBuffer)                  \
  X(vkDestroyBuffer)                 \
  X(vkGetBufferMemoryRequirements)   \
  X(vkAllocateMemory)                \
  X(vkFreeMemory)                    \
  X(vkBindBufferMemory)              \
  X(vkMapMemory)                     \
  X(vkUnmapMemory)                   \
  X(vkCreateCommandPool)             \
  X(vkDestroyCommandPool)            \
  X(vkAllocateCommandBuffers)        \
  X(vkBeginCommandBuffer)            \
  X(vkEndCommandBuffer)              \
  X(vkResetCommandBuffer)            \
  X(vkQueueSubmit)                   \
  X(vkCreateFence)                   \
  X(vkDestroyFence)                  \
  X(vkWaitForFences)                 \
  X(vkResetFences)                   \
  X(vkCmdCopyBuffer)                 \
  X(vkCmdFillBuffer)                 \
  X(vkCmdPipelineBarrier)            \
  X(vkCmdBindPipeline)               \
  X(vkCmdBindDescriptorSets)         \
  X(vkCmdPushConstants)              \
  X(vkCmdDispatch)                   \
  X(vkCreateShaderModule)            \
  X(vkDestroyShaderModule)           \
  X(vkCreateDescriptorSetLayout)     \
  X(vkDestroyDescriptorSetLayout)    \
  X(vkCreatePipelineLayout)          \
  X(vkDestroyPipelineLayout)         \
  X(vkCreateComputePipelines)        \
  X(vkDestroyPipeline)               \
  X(vkCreateDescriptorPool)          \
  X(vkDestroyDescriptorPool)         \
  X(vkAllocateDescriptorSets)        \
  X(vkUpdateDescriptorSets)          \
  X(vkResetDescriptorPool)

// The resolved loader (global and instance entry points). Construct with
// load(); when `error` is non-empty nothing here may be called.
struct VulkanLoader {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define GRAPHRT_VK_FIELD(name) PFN_##name name = nullptr;
  GRAPHRT_VK_GLOBAL_SYMBOLS(GRAPHRT_VK_FIELD)
  GRAPHRT_VK_INSTANCE_SYMBOLS(GRAPHRT_VK_FIELD)
#undef GRAPHRT_VK_FIELD
  // Vulkan 1.1's, for the 8/16-bit storage and arithmetic features (else null).
  PFN_vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceFeatures2 = nullptr;
  // Vulkan 1.1's instance version query (null: a 1.0 loader).
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;

  uint32_t instance_api_version = VK_API_VERSION_1_0;  // what the instance was made for
  std::string path;   // the library that was opened
  std::string error;  // why Vulkan cannot be used ("" when it can)
  void* handle = nullptr;

  bool ok() const { return error.empty(); }

  // Opens `path` (RTLD_NOW | RTLD_LOCAL) and resolves the global entry
  // points. Never throws. The library stays loaded for the process: drivers
  // keep threads and exit handlers of their own.
  static VulkanLoader open(const std::string& path);
  // Resolves the instance entry points for `instance`; "" or what is missing.
  std::string resolve_instance(VkInstance instance);
};

// The device entry points of one VkDevice.
struct VulkanDeviceFunctions {
#define GRAPHRT_VK_FIELD(name) PFN_##name name = nullptr;
  GRAPHRT_VK_DEVICE_SYMBOLS(GRAPHRT_VK_FIELD)
#undef GRAPHRT_VK_FIELD
  // VK_KHR_push_descriptor, when the device has it (else null).
  PFN_vkCmdPushDescriptorSetKHR vkCmdPushDescriptorSetKHR = nullptr;

  // "" or the names the driver did not give.
  std::string resolve(const VulkanLoader& loader, VkDevice device);
};

// The loader a Vulkan device API opens by default: $GRAPHRT_VULKAN_LOADER when
// set (tests point it at a missing file), else "libvulkan.so.1".
std::string default_loader_path();

// A Vulkan info structure of type `type`, every other field zero.
template <typename T>
T vk_struct(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

// "VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)".
std::string describe_result(VkResult r);

}  // namespace vulkan_backend
}  // namespace graphrt
