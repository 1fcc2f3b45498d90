#include "backends/opencl/opencl_address_space.h"

#include "graphrt/error.h"

namespace graphrt {
namespace opencl_backend {

void* AddressSpace::insert(DeviceBuffer buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t span = (buffer.size + kAlignment - 1) / kAlignment * kAlignment + kAlignment;
  if (next_ > UINTPTR_MAX - span)
    throw Error(ErrorKind::kResourceExhausted, "the OpenCL back end ran out of device addresses");
  const uintptr_t base = next_;
  next_ += span;
  buffers_.emplace(base, std::move(buffer));
  return reinterpret_cast<void*>(base);
}

bool AddressSpace::find(const void* address, Found* out) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = buffers_.upper_bound(a);
  if (it == buffers_.begin()) return false;
  --it;
  if (a - it->first > it->second.size) return false;
  out->mem = it->second.mem;
  out->size = it->second.size;
  out->device = it->second.device;
  out->offset = a - it->first;
  return true;
}

cl_mem AddressSpace::view(const void* base, size_t offset) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = buffers_.find(reinterpret_cast<uintptr_t>(base));
  if (it == buffers_.end()) return nullptr;
  auto v = it->second.views.find(offset);
  return v == it->second.views.end() ? nullptr : v->second;
}

bool AddressSpace::add_view(const void* base, size_t offset, cl_mem view) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = buffers_.find(reinterpret_cast<uintptr_t>(base));
  if (it == buffers_.end()) return false;
  return it->second.views.emplace(offset, view).second;
}

bool AddressSpace::erase(const void* address, DeviceBuffer* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = buffers_.find(reinterpret_cast<uintptr_t>(address));
  if (it == buffers_.end()) return false;
  *out = std::move(it->second);
  buffers_.erase(it);
  return true;
}

std::vector<DeviceBuffer> AddressSpace::take_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<DeviceBuffer> out;
  out.reserve(buffers_.size());
  for (auto& entry : buffers_) out.push_back(std::move(entry.second));
  buffers_.clear();
  return out;
}

size_t AddressSpace::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return buffers_.size();
}

}  // namespace opencl_backend
}  // namespace graphrt
