#include "backends/vulkan/vulkan_loader.h"

#include <dlfcn.h>

#include <cstdlib>

namespace graphrt {
namespace vulkan_backend {

std::string default_loader_path() {
  const char* env = std::getenv("GRAPHRT_VULKAN_LOADER");
  if (env && *env) return env;
  return "libvulkan.so.1";
}

std::string describe_result(VkResult r) {
  const char* name = "VK_ERROR_UNKNOWN";
  switch (r) {
    case VK_SUCCESS: name = "VK_SUCCESS"; break;
    case VK_NOT_READY: name = "VK_NOT_READY"; break;
    case VK_TIMEOUT: name = "VK_TIMEOUT"; break;
    case VK_INCOMPLETE: name = "VK_INCOMPLETE"; break;
    case VK_ERROR_OUT_OF_HOST_MEMORY: name = "VK_ERROR_OUT_OF_HOST_MEMORY"; break;
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: name = "VK_ERROR_OUT_OF_DEVICE_MEMORY"; break;
    case VK_ERROR_INITIALIZATION_FAILED: name = "VK_ERROR_INITIALIZATION_FAILED"; break;
    case VK_ERROR_DEVICE_LOST: name = "VK_ERROR_DEVICE_LOST"; break;
    case VK_ERROR_MEMORY_MAP_FAILED: name = "VK_ERROR_MEMORY_MAP_FAILED"; break;
    case VK_ERROR_LAYER_NOT_PRESENT: name = "VK_ERROR_LAYER_NOT_PRESENT"; break;
    case VK_ERROR_EXTENSION_NOT_PRESENT: name = "VK_ERROR_EXTENSION_NOT_PRESENT"; break;
    case VK_ERROR_FEATURE_NOT_PRESENT: name = "VK_ERROR_FEATURE_NOT_PRESENT"; break;
    case VK_ERROR_INCOMPATIBLE_DRIVER: name = "VK_ERROR_INCOMPATIBLE_DRIVER"; break;
    case VK_ERROR_TOO_MANY_OBJECTS: name = "VK_ERROR_TOO_MANY_OBJECTS"; break;
    case VK_ERROR_FORMAT_NOT_SUPPORTED: name = "VK_ERROR_FORMAT_NOT_SUPPORTED"; break;
    case VK_ERROR_FRAGMENTED_POOL: name = "VK_ERROR_FRAGMENTED_POOL"; break;
    case VK_ERROR_OUT_OF_POOL_MEMORY: name = "VK_ERROR_OUT_OF_POOL_MEMORY"; break;
    case VK_ERROR_INVALID_SHADER_NV: name = "VK_ERROR_INVALID_SHADER_NV"; break;
    default: break;
  }
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

namespace {
std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

VulkanLoader VulkanLoader::open(const std::string& path) {
  VulkanLoader l;
  l.path = path;
  l.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!l.handle) {
    const char* why = dlerror();
    l.error = base_name(path) + " not found: " + (why ? why : "dlopen failed") +
              " (install the Vulkan loader, Debian libvulkan1, and a driver; set GRAPHRT_VULKAN_LOADER to its "
              "libvulkan.so.1)";
    return l;
  }
  l.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(l.handle, "vkGetInstanceProcAddr"));
  if (!l.vkGetInstanceProcAddr) {
    l.error = base_name(path) + " has no vkGetInstanceProcAddr: not a Vulkan loader";
    return l;
  }
  std::string missing;
#define GRAPHRT_VK_RESOLVE(name)                                                          \
  l.name = reinterpret_cast<PFN_##name>(l.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name)); \
  if (!l.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  GRAPHRT_VK_GLOBAL_SYMBOLS(GRAPHRT_VK_RESOLVE)
#undef GRAPHRT_VK_RESOLVE
  if (!missing.empty()) l.error = base_name(path) + " lacks Vulkan entry points: " + missing;
  l.vkEnumerateInstanceVersion =
      reinterpret_cast<PFN_vkEnumerateInstanceVersion>(l.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  return l;
}

std::string VulkanLoader::resolve_instance(VkInstance instance) {
  std::string missing;
#define GRAPHRT_VK_RESOLVE(name)                                                   \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name));     \
  if (!name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  GRAPHRT_VK_INSTANCE_SYMBOLS(GRAPHRT_VK_RESOLVE)
#undef GRAPHRT_VK_RESOLVE
  vkGetPhysicalDeviceFeatures2 =
      reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceFeatures2"));
  return missing;
}

std::string VulkanDeviceFunctions::resolve(const VulkanLoader& loader, VkDevice device) {
  std::string missing;
#define GRAPHRT_VK_RESOLVE(name)                                                      \
  name = reinterpret_cast<PFN_##name>(loader.vkGetDeviceProcAddr(device, #name));     \
  if (!name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  GRAPHRT_VK_DEVICE_SYMBOLS(GRAPHRT_VK_RESOLVE)
#undef GRAPHRT_VK_RESOLVE
  return missing;
}

}  // namespace vulkan_backend
}  // namespace graphrt
