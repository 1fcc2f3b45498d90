// Host memory. Large allocations (model storage, big arrays) are mappings of
// their own with huge pages where possible (host_pages.h); the rest comes from
// the allocator.
#pragma once

#include <mutex>
#include <unordered_map>

#include "graphrt/device_api.h"

namespace graphrt {

class CpuDeviceAPI : public DeviceAPI {
 public:
  void* alloc(DLDevice dev, size_t nbytes, size_t alignment) override;
  void free(DLDevice dev, void* ptr) override;
  void copy(const DLTensor* from, DLTensor* to, void* stream) override;
  void* alloc_workspace(DLDevice dev, size_t nbytes) override;
  void free_workspace(DLDevice dev, void* ptr) override;

 private:
  std::mutex mappings_mutex_;
  std::unordered_map<void*, size_t> mappings_;  // the large allocations and their sizes
};

}  // namespace graphrt
