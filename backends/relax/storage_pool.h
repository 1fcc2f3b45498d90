// The memory behind alloc_storage: 64-byte aligned host blocks that return to
// a free list when the last tensor viewing them goes, and are handed out again
// by the next request of the same rounded size (TVM's pooled allocator), so a
// model's second call allocates nothing. The naive mode frees at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "graphrt/ndarray.h"

namespace graphrt {
namespace relax {

// Blocks larger than this are refused (a hostile size must not reach the system allocator).
constexpr int64_t kMaxStorageBytes = int64_t{1} << 40;

class StoragePool : public std::enable_shared_from_this<StoragePool> {
 public:
  // `max_bytes`: the most bytes the pool holds at once, in use and free
  // (kMaxStorageBytes at most). A request beyond it first frees the free
  // list, then is refused with kResourceExhausted.
  static std::shared_ptr<StoragePool> create(bool pooled, int64_t max_bytes = kMaxStorageBytes);
  ~StoragePool();
  StoragePool(const StoragePool&) = delete;
  StoragePool& operator=(const StoragePool&) = delete;

  // A uint8 array of `nbytes` on the host; its memory comes back here.
  NDArray allocate(int64_t nbytes);
  // A tensor of `shape` and `dtype` (a view of such an array).
  NDArray allocate_tensor(const std::vector<int64_t>& shape, DLDataType dtype);
  // Blocks taken from the system so far (tests: a warm call adds none).
  uint64_t system_allocations() const;
  // Blocks waiting in the free list.
  size_t free_blocks() const;
  // False for the naive allocator (a block is freed when its last user goes).
  bool pooled() const { return pooled_; }

 private:
  StoragePool(bool pooled, int64_t max_bytes) : pooled_(pooled), max_bytes_(max_bytes) {}
  void* take(size_t size);
  // Frees the free list's blocks; the caller holds the lock.
  void release_free_blocks();
  void give_back(void* block, size_t size);

  const bool pooled_;
  const int64_t max_bytes_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  uint64_t system_allocations_ = 0;
  int64_t held_ = 0;  // bytes taken from the system and not freed, in use or free
};

}  // namespace relax
}  // namespace graphrt
