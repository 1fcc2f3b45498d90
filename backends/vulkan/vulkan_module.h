// The "vulkan" device module: its functions launch the module's compute
// shaders on the thread's current Vulkan device.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"
#include "backends/vulkan/vulkan_kernel.h"
#include "backends/vulkan/vulkan_payload.h"

namespace graphrt {
namespace vulkan_backend {

class VulkanDeviceAPI;

// A decoded module whose every function has been checked: its shader is in
// the map, is valid SPIR-V for Vulkan (SPIRV-Tools), and declares what the
// function table says. Throws graphrt::Error naming module, function and field.
struct CheckedVulkanModule {
  VulkanModuleImage image;
  std::vector<VulkanKernelPlan> plans;  // in fmap order
};
CheckedVulkanModule check_vulkan_module(VulkanModuleImage image);

class VulkanModuleNode : public ModuleNode {
 public:
  VulkanModuleNode(CheckedVulkanModule module, std::shared_ptr<VulkanDeviceAPI> api);
  ~VulkanModuleNode() override;

  std::string type_key() const override { return "vulkan"; }
  PackedFunc find_function(const std::string& name, const Module& self) override;
  std::vector<std::string> function_names() const override;
  const VulkanModuleImage& image() const { return module_.image; }

 private:
  struct Kernel;
  CheckedVulkanModule module_;
  std::shared_ptr<VulkanDeviceAPI> api_;
  std::vector<std::shared_ptr<Kernel>> kernels_;  // per plan, made on first look-up
  std::mutex mutex_;
};

// The bytes loader's body: decode, check, make the module (no device needed).
Module load_vulkan_module(BlobReader& reader, std::shared_ptr<VulkanDeviceAPI> api);

}  // namespace vulkan_backend
}  // namespace graphrt
