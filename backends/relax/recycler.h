// What a Relax function makes anew on every call and drops by the call's end (make_shape's
// shapes, make_tuple's tuples, reshape's views): the VM keeps them and hands one out again
// once nothing else holds it, so that a steady call of the same function (a decode step)
// allocates no object, vector or array node of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/relax/storage_pool.h"
#include "backends/relax/value.h"

namespace graphrt {
namespace relax {

class Recycler {
 public:
  // A shape of `dims`.
  Value shape(const int64_t* dims, size_t n);
  // A tuple of the values `items` point at.
  Ref<TupleObj> tuple(const Value* const* items, size_t n);
  // A shape heap of `size` int64 values (alloc_shape_heap: one per function call), from `pool`
  // when none kept is free; its values are the caller's to set.
  NDArray shape_heap(StoragePool& pool, int64_t size);
  // A view of `data` (compact, checked by the caller) with `dims`, sharing its storage.
  NDArray view(const NDArray& data, const std::vector<int64_t>& dims);
  // Kept tuples and views that nothing else holds let go of what they hold: a kept view of a
  // tensor would otherwise hold its storage, which the next call's alloc_storage could then
  // not reuse (StorageObj::idle counts every holder). Called before each top-level call.
  void release_idle();

  // How many of each are kept at most: more live at once than that are made and not kept.
  static constexpr size_t kMaxKept = 64;

 private:
  std::vector<Ref<ShapeObj>> shapes_;
  std::vector<Ref<TupleObj>> tuples_;
  std::vector<NDArray> views_;
  std::vector<NDArray> heaps_;
};

}  // namespace relax
}  // namespace graphrt
