#include "backends/vulkan/vulkan_driver_pin.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

namespace graphrt {
namespace vulkan_backend {

namespace {

int collect_name(struct dl_phdr_info* info, size_t, void* out) {
  if (info->dlpi_name && info->dlpi_name[0]) static_cast<std::vector<std::string>*>(out)->push_back(info->dlpi_name);
  return 0;
}

bool is_vulkan_driver(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return false;
  const bool driver = dlsym(h, "vk_icdGetInstanceProcAddr") != nullptr;
  dlclose(h);
  return driver;
}

}  // namespace

void pin_loaded_vulkan_drivers() {
  // Names first, dlopen after: dl_iterate_phdr holds the dynamic linker's lock.
  std::vector<std::string> loaded;
  dl_iterate_phdr(collect_name, &loaded);
  for (const std::string& path : loaded) {
    if (!is_vulkan_driver(path)) continue;
    // This reference is dropped at once: RTLD_NODELETE keeps the object mapped.
    if (void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE)) dlclose(h);
  }
}

}  // namespace vulkan_backend
}  // namespace graphrt
