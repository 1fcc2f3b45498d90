// One Vulkan device in use: its logical device and compute queue, its
// buffers, the pipelines made for it, and the command buffer that collects
// dispatches and device copies until the next synchronisation.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_kernel.h"
#include "backends/vulkan/vulkan_loader.h"

namespace graphrt {
namespace vulkan_backend {

// A VkBuffer with its own memory; `mapped` is non-null where that memory is
// host visible (then coherent, mapped for the buffer's life).
struct VulkanBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  size_t size = 0;
};

// What one kernel needs on one device, made once.
struct VulkanPipeline {
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

// A buffer argument as a dispatch binds it.
struct BoundBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
};

struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties{};
};

class VulkanDevice {
 public:
  // Creates the logical device (throws graphrt::Error naming the call).
  VulkanDevice(const VulkanLoader& loader, const PhysicalDeviceInfo& physical, int id);
  ~VulkanDevice();
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  int id() const { return id_; }
  const VkPhysicalDeviceLimits& limits() const { return limits_; }
  const std::string& name() const { return name_; }
  bool has_push_descriptors() const { return fn_.vkCmdPushDescriptorSetKHR != nullptr; }
  bool host_visible() const { return device_memory_host_visible_; }

  std::unique_ptr<VulkanBuffer> create_buffer(size_t nbytes);
  void destroy_buffer(VulkanBuffer& buffer);

  // The pipeline of `plan` from `words` (throws, naming the kernel). The
  // caller owns it and gives it back through destroy_pipeline; one still
  // alive when the device goes is destroyed with it (its handles only).
  std::unique_ptr<VulkanPipeline> create_pipeline(const VulkanKernelPlan& plan, const std::vector<uint32_t>& words);
  void destroy_pipeline(VulkanPipeline& pipeline);

  // Records one dispatch (and the barrier after it) in the open batch.
  void dispatch(const VulkanKernelPlan& plan, const VulkanPipeline& pipeline, const BoundBuffer* buffers,
                const uint64_t* scalar_slots, const VulkanLaunch& launch);
  // Host <-> device: the batch is submitted and waited for first, so the
  // host sees (and overwrites) the contents after the work queued before.
  void write(const VulkanBuffer& dst, size_t offset, const void* src, size_t nbytes);
  void read(const VulkanBuffer& src, size_t offset, void* dst, size_t nbytes);
  // Device to device, queued in the batch.
  void copy(const VulkanBuffer& src, size_t src_offset, const VulkanBuffer& dst, size_t dst_offset, size_t nbytes);
  // Submits the batch and waits for it.
  void synchronize();
  // Throws an Error "<what> on vulkan:<id>: VK_ERROR_... (n)" unless success.
  void check(VkResult r, const std::string& what) const;

 private:
  void create_logical_device(VkPhysicalDevice physical);
  void choose_memory_types(VkPhysicalDevice physical);
  std::unique_ptr<VulkanBuffer> make_buffer(size_t nbytes, uint32_t memory_type, bool map);
  void begin_batch_locked();
  void flush_locked();
  void barrier_locked(VkPipelineStageFlags src_stage, VkAccessFlags src_access);
  VkDescriptorSet allocate_set_locked(const VulkanPipeline& pipeline);
  VulkanBuffer& staging_locked(size_t nbytes);
  VulkanBuffer& uniform_locked(size_t nbytes);

  const VulkanLoader& loader_;
  VulkanDeviceFunctions fn_;
  int id_ = 0;
  std::string name_;
  VkPhysicalDeviceLimits limits_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t device_memory_type_ = 0;
  uint32_t host_memory_type_ = 0;
  bool device_memory_host_visible_ = false;

  std::mutex mutex_;  // the batch and everything below
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer command_buffer_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool recording_ = false;
  size_t batch_commands_ = 0;
  std::vector<VkDescriptorPool> descriptor_pools_;  // the batch's (without push descriptors)
  size_t descriptor_pool_in_use_ = 0;
  std::vector<VulkanPipeline*> live_pipelines_;  // destroyed with the device if still alive
  std::unique_ptr<VulkanBuffer> staging_;
  std::vector<std::unique_ptr<VulkanBuffer>> uniforms_;  // host visible, one per UBO dispatch of the batch
  size_t uniforms_in_use_ = 0;
};

}  // namespace vulkan_backend
}  // namespace graphrt
