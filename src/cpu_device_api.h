#pragma once

#include "graphrt/device_api.h"

namespace graphrt {

class CpuDeviceAPI : public DeviceAPI {
 public:
  void* alloc(DLDevice dev, size_t nbytes, size_t alignment) override;
  void free(DLDevice dev, void* ptr) override;
  void copy(const DLTensor* from, DLTensor* to, void* stream) override;
  void* alloc_workspace(DLDevice dev, size_t nbytes) override;
  void free_workspace(DLDevice dev, void* ptr) override;
};

}  // namespace graphrt
