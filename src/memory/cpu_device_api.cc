// Host memory: aligned allocation, memcpy, and the per-thread workspace pool.
#include "memory/cpu_device_api.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "host_pages.h"
#include "memory/workspace_pool.h"

namespace graphrt {

void* CpuDeviceAPI::alloc(DLDevice, size_t nbytes, size_t alignment) {
  if (nbytes >= kHostMappingMinBytes) {
    void* p = map_host_pages(nbytes, /*populate=*/false);
    try {
      std::lock_guard<std::mutex> lock(mappings_mutex_);
      mappings_.emplace(p, nbytes);
    } catch (...) {
      unmap_host_pages(p, nbytes);
      throw;
    }
    return p;
  }
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  size_t size = (nbytes + alignment - 1) / alignment * alignment;
  if (size == 0) size = alignment;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size) != 0 || !p)
    throw Error(ErrorKind::kResourceExhausted, "out of host memory allocating " + std::to_string(nbytes) + " bytes");
  return p;
}

void CpuDeviceAPI::free(DLDevice, void* ptr) {
  {
    std::lock_guard<std::mutex> lock(mappings_mutex_);
    auto it = mappings_.find(ptr);
    if (it != mappings_.end()) {
      unmap_host_pages(ptr, it->second);
      mappings_.erase(it);
      return;
    }
  }
  std::free(ptr);
}

void CpuDeviceAPI::copy(const DLTensor* from, DLTensor* to, void*) {
  std::memmove(static_cast<char*>(to->data) + to->byte_offset,
               static_cast<const char*>(from->data) + from->byte_offset, tensor_nbytes(from));
}

void* CpuDeviceAPI::alloc_workspace(DLDevice, size_t nbytes) { return cpu_workspace_pool().alloc(nbytes); }
void CpuDeviceAPI::free_workspace(DLDevice, void* ptr) { cpu_workspace_pool().free(ptr); }

}  // namespace graphrt
