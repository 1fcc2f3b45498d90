// Host memory: aligned allocation, memcpy, and the per-thread workspace pool.
#include "cpu_device_api.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "workspace_pool.h"

namespace graphrt {

void* CpuDeviceAPI::alloc(DLDevice, size_t nbytes, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  size_t size = (nbytes + alignment - 1) / alignment * alignment;
  if (size == 0) size = alignment;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size) != 0 || !p)
    throw Error("out of host memory allocating " + std::to_string(nbytes) + " bytes");
  return p;
}

void CpuDeviceAPI::free(DLDevice, void* ptr) { std::free(ptr); }

void CpuDeviceAPI::copy(const DLTensor* from, DLTensor* to, void*) {
  std::memmove(static_cast<char*>(to->data) + to->byte_offset,
               static_cast<const char*>(from->data) + from->byte_offset, tensor_nbytes(from));
}

void* CpuDeviceAPI::alloc_workspace(DLDevice, size_t nbytes) { return cpu_workspace_pool().alloc(nbytes); }
void CpuDeviceAPI::free_workspace(DLDevice, void* ptr) { cpu_workspace_pool().free(ptr); }

}  // namespace graphrt
