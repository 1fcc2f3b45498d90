// Device addresses for OpenCL buffers.
//
// An OpenCL buffer is a handle (cl_mem), not an address, yet what graphrt and
// TVM's host code do with a tensor's data pointer is address arithmetic: a
// Relax storage's tensors are the storage's address plus an offset. So each
// buffer gets a range of addresses of its own, never mapped on the host and
// never reused, and a kernel argument or a copy finds its buffer and offset
// from the address it is given. An address nobody allocated (a host pointer
// passed where a device tensor belongs) is found by no lookup: an error,
// never a driver's crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "backends/opencl/opencl_library.h"

namespace graphrt {
namespace opencl_backend {

struct DeviceBuffer {
  cl_mem mem = nullptr;
  size_t size = 0;
  int device = 0;
  // Sub-buffers made for kernel arguments at an offset, by offset.
  std::map<size_t, cl_mem> views;
};

class AddressSpace {
 public:
  // Ranges start 4 KiB aligned with at least 4 KiB unused after each.
  static constexpr uintptr_t kFirstAddress = uintptr_t(1) << 44;
  static constexpr size_t kAlignment = 4096;

  // A new range for `buffer`; returns its first address.
  void* insert(DeviceBuffer buffer);
  // What a lookup gives: a copy, as the record may be erased by another
  // thread afterwards (the API keeps a released buffer while work uses it).
  struct Found {
    cl_mem mem = nullptr;
    size_t size = 0;
    int device = 0;
    size_t offset = 0;  // of the address into the buffer
  };
  // The buffer whose range holds `address` (its last byte included, and one
  // past it for empty views); false when none does.
  bool find(const void* address, Found* out) const;
  // The sub-buffer kept for (address's buffer, offset), or null.
  cl_mem view(const void* base, size_t offset) const;
  // Keeps `view` for the buffer at `base`; false when that buffer is gone
  // or already has one (the caller then releases its own).
  bool add_view(const void* base, size_t offset, cl_mem view);
  // Removes the buffer that starts at `address`; false when none does.
  bool erase(const void* address, DeviceBuffer* out);
  // Removes every buffer (at shutdown).
  std::vector<DeviceBuffer> take_all();
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<uintptr_t, DeviceBuffer> buffers_;
  uintptr_t next_ = kFirstAddress;
};

}  // namespace opencl_backend
}  // namespace graphrt
