#include "backends/relax/storage_pool.h"

#include <cstdlib>
#include <string>

#include "graphrt/error.h"

namespace graphrt {
namespace relax {

namespace {
constexpr size_t kAlignment = 64;
size_t round_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }
}  // namespace

std::shared_ptr<StoragePool> StoragePool::create(bool pooled, int64_t max_bytes) {
  if (max_bytes < 0 || max_bytes > kMaxStorageBytes) max_bytes = kMaxStorageBytes;
  return std::shared_ptr<StoragePool>(new StoragePool(pooled, max_bytes));
}

StoragePool::~StoragePool() {
  for (auto& kv : free_) std::free(kv.second);
}

void* StoragePool::take(size_t size) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it != free_.end()) {
      void* block = it->second;
      free_.erase(it);
      return block;
    }
    if (static_cast<int64_t>(size) > max_bytes_ - held_) release_free_blocks();
    if (static_cast<int64_t>(size) > max_bytes_ - held_)
      throw Error(ErrorKind::kResourceExhausted, "storage of " + std::to_string(size) + " bytes would exceed the VM's " +
                                                     std::to_string(max_bytes_) + "-byte limit (" +
                                                     std::to_string(held_) + " bytes held)");
    held_ += static_cast<int64_t>(size);
    ++system_allocations_;
  }
  void* block = std::aligned_alloc(kAlignment, size);
  if (!block) {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ -= static_cast<int64_t>(size);
    throw Error(ErrorKind::kResourceExhausted, "out of memory allocating " + std::to_string(size) + " bytes of VM storage");
  }
  return block;
}

void StoragePool::release_free_blocks() {
  for (auto& kv : free_) {
    std::free(kv.second);
    held_ -= static_cast<int64_t>(kv.first);
  }
  free_.clear();
}

void StoragePool::give_back(void* block, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pooled_) {
    held_ -= static_cast<int64_t>(size);
    return std::free(block);
  }
  free_.emplace(size, block);
}

NDArray StoragePool::allocate(int64_t nbytes) {
  if (nbytes < 0 || nbytes > max_bytes_)
    throw Error(ErrorKind::kResourceExhausted, "storage of " + std::to_string(nbytes) + " bytes outside 0.." +
                                                   std::to_string(max_bytes_));
  const size_t size = round_up(static_cast<size_t>(nbytes) == 0 ? 1 : static_cast<size_t>(nbytes));
  void* block = take(size);
  std::shared_ptr<StoragePool> self = shared_from_this();
  auto storage = std::make_shared<Storage>(block, [self, size](void* p) { self->give_back(p, size); });
  return NDArray::wrap(block, {nbytes}, DLDataType{kDLUInt, 8, 1}, DLDevice{kDLCPU, 0}, std::move(storage));
}

NDArray StoragePool::allocate_tensor(const std::vector<int64_t>& shape, DLDataType dtype) {
  const size_t nbytes = dtype_bytes(dtype, shape_numel(shape.data(), static_cast<int>(shape.size())));
  if (nbytes > static_cast<size_t>(kMaxStorageBytes))
    throw Error(ErrorKind::kResourceExhausted, "a tensor of " + std::to_string(nbytes) + " bytes is larger than " +
                                                   std::to_string(kMaxStorageBytes));
  return allocate(static_cast<int64_t>(nbytes)).view(shape, dtype);
}

uint64_t StoragePool::system_allocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return system_allocations_;
}

size_t StoragePool::free_blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

}  // namespace relax
}  // namespace graphrt
