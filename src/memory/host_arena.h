// One host mapping shared by many arrays written once, together: the large
// params of a model as they are decoded. Its pages (huge ones for its whole
// 2 MiB blocks, see host_pages.h) are all mapped in one call before the
// arrays are written.
#pragma once

#include <cstddef>
#include <memory>

#include "graphrt/ndarray.h"

namespace graphrt {

class HostArena {
 public:
  static constexpr size_t kAlignment = 64;
  // Smaller arrays come from the allocator instead, whose pages are often
  // mapped already: a mapping of their own would only add pages.
  static constexpr size_t kMinArrayBytes = size_t{128} << 10;
  // Bytes an array of `nbytes` takes in an arena (its start stays aligned).
  static size_t slot_bytes(size_t nbytes) { return (nbytes + kAlignment - 1) / kAlignment * kAlignment; }

  explicit HostArena(size_t nbytes);
  // The next `nbytes` of the arena; the caller sized the arena for every take.
  void* take(size_t nbytes);
  // Keeps the whole arena alive: every array made from it holds this.
  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  std::shared_ptr<Storage> storage_;
  size_t size_ = 0;
  size_t used_ = 0;
};

}  // namespace graphrt
