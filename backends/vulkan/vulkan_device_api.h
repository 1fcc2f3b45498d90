// The kDLVulkan DeviceAPI: loader and instance bring-up, device selection,
// allocations (pooled), copies, synchronisation, and the teardown at exit.
//
// Vulkan memory has no address the host could compute with, but TVM's
// calling convention passes a tensor as a pointer and the VM offsets it into
// storage. Each buffer therefore gets a range of a private address space
// (never dereferenced); a pointer maps back to its buffer and the offset in it.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/device_api.h"
#include "src/layer_api/exit_shutdown.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_loader.h"

namespace graphrt {
namespace vulkan_backend {

constexpr int kMaxVulkanDevices = 16;

// A pointer resolved to its buffer.
struct BufferRef {
  VulkanBuffer* buffer = nullptr;
  int device_id = 0;
  size_t offset = 0;
};

class VulkanDeviceAPI : public DeviceAPI, public ExitShutdown, public std::enable_shared_from_this<VulkanDeviceAPI> {
 public:
  explicit VulkanDeviceAPI(std::string loader_path = default_loader_path());
  ~VulkanDeviceAPI() override;

  void check_available(DLDevice dev) override;
  void* alloc(DLDevice dev, size_t nbytes, size_t alignment) override;
  void free(DLDevice dev, void* ptr) override;
  void copy(const DLTensor* from, DLTensor* to, void* stream) override;
  void* alloc_workspace(DLDevice dev, size_t nbytes) override;
  void free_workspace(DLDevice dev, void* ptr) override;
  void synchronize(DLDevice dev, void* stream) override;
  void set_device(DLDevice dev) override;

  // "" when Vulkan is usable, else why not (no loader, no instance).
  std::string init_error();
  int device_count();
  // The device's name and API version, "" when absent.
  std::string device_description(int device_id);
  // This thread's device (the last set_device; 0 before any).
  int current_device() const;
  // The device, created on first use; throws as check_available does.
  VulkanDevice& device(int device_id);
  // The buffer holding `ptr` (an address from alloc); throws kInvalidArgument
  // naming `what` when it is not one of this API's.
  BufferRef resolve(const void* ptr, const std::string& what);
  // The same without an error: false when `ptr` is not one of this API's.
  bool try_resolve(const void* ptr, BufferRef* out);
  // Whether the process is past the exit-time teardown (nothing to release).
  bool shut_down() const { return shut_down_.load(); }
  // Waits for every device, then destroys pipelines' owners' last chance has
  // passed: buffers, devices, the instance, in that order. Idempotent.
  void shutdown() override;

  // Pipelines are the devices' and die with them; a module releases its own
  // earlier through here (a no-op after shutdown).
  void release_pipeline(int device_id, std::unique_ptr<VulkanPipeline> pipeline);

 private:
  struct Allocation {
    std::unique_ptr<VulkanBuffer> buffer;
    int device_id = 0;
    size_t bucket = 0;
    bool in_use = false;
  };
  void ensure_init();
  void create_instance();
  uintptr_t pool_alloc(int device_id, size_t nbytes);
  void pool_free(uintptr_t address);
  void destroy_all_buffers_locked();

  std::string loader_path_;
  std::once_flag init_once_;
  VulkanLoader loader_;
  VkInstance instance_ = VK_NULL_HANDLE;
  std::string init_error_;
  std::vector<PhysicalDeviceInfo> physical_;

  std::mutex mutex_;  // devices, allocations
  std::array<std::unique_ptr<VulkanDevice>, kMaxVulkanDevices> devices_;
  std::map<uintptr_t, Allocation> allocations_;              // address -> buffer
  std::multimap<std::pair<int, size_t>, uintptr_t> free_;    // (device, bucket) -> cached address
  uintptr_t next_address_;
  std::atomic<bool> shut_down_{false};
};

// The default runtime's Vulkan device API (tests, benches); throws kNotFound
// when that runtime's kDLVulkan device is not this back end's.
std::shared_ptr<VulkanDeviceAPI> vulkan_device_api();

}  // namespace vulkan_backend
}  // namespace graphrt
