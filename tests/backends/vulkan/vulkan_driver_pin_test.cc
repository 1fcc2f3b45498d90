// The driver the loader opened stays mapped after the back end destroys its instance (as it
// does at exit): its process-wide state stays reachable, and a leak report names it. Its own
// program, so that no other instance (the default runtime's) holds the driver loaded.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_device_api.h"

namespace {

int collect_name(struct dl_phdr_info* info, size_t, void* out) {
  if (info->dlpi_name && info->dlpi_name[0]) static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
  return 0;
}

// Loaded objects exporting the driver entry point; looked up here, not with the back end's code.
std::vector<std::string> loaded_vulkan_drivers() {
  std::vector<std::string> names, drivers;
  dl_iterate_phdr(collect_name, &names);
  for (const std::string& n : names) {
    void* h = dlopen(n.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    if (dlsym(h, "vk_icdGetInstanceProcAddr")) drivers.push_back(n);
    dlclose(h);
  }
  return drivers;
}

bool vulkan_required() {
  const char* ci = std::getenv("CI");
  const char* required = std::getenv("GRAPHRT_REQUIRE_VULKAN");
  return (ci && std::string(ci) == "true") || (required && std::string(required) == "1");
}

TEST(VulkanDriverPin, TheDriverStaysLoadedAfterTheInstanceIsDestroyed) {
  ASSERT_TRUE(loaded_vulkan_drivers().empty()) << "a driver was loaded before the back end made its instance";
  graphrt::vulkan_backend::VulkanDeviceAPI api;
  if (api.device_count() == 0) {
    if (vulkan_required()) FAIL() << "no Vulkan device, and one is required: " << api.init_error();
    GTEST_SKIP() << "no Vulkan device: " << api.init_error();
  }
  std::vector<std::string> opened = loaded_vulkan_drivers();
  ASSERT_FALSE(opened.empty()) << "a device exists but no loaded object exports vk_icdGetInstanceProcAddr";
  api.shutdown();  // destroys the instance: the loader dlcloses its drivers
  EXPECT_EQ(loaded_vulkan_drivers(), opened);
}

}  // namespace
