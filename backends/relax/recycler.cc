#include "backends/relax/recycler.h"

#include <algorithm>

namespace graphrt {
namespace relax {

Value Recycler::shape(const int64_t* dims, size_t n) {
  for (const Ref<ShapeObj>& s : shapes_)
    if (s->ref_count() == 1) {
      s->dims.assign(dims, dims + n);  // the capacity of a shape made before: no allocation
      return s;
    }
  Ref<ShapeObj> s = make_ref<ShapeObj>(std::vector<int64_t>(dims, dims + n));
  if (shapes_.size() < kMaxKept) shapes_.push_back(s);
  return s;
}

Ref<TupleObj> Recycler::tuple(const Value* const* items, size_t n) {
  Ref<TupleObj> t;
  for (const Ref<TupleObj>& kept : tuples_)
    if (kept->ref_count() == 1 && kept->items.capacity() >= n) {
      t = kept;
      break;
    }
  if (!t) {
    t = make_ref<TupleObj>(std::vector<Value>());
    t->items.reserve(n);
    if (tuples_.size() < kMaxKept) tuples_.push_back(t);
  }
  t->items.clear();
  for (size_t i = 0; i < n; ++i) t->items.push_back(*items[i]);
  t->depth = nested_depth(t->items);
  return t;
}

NDArray Recycler::view(const NDArray& data, const std::vector<int64_t>& dims) {
  NDArrayNode* from = NDArrayNode::from_handle(data.handle());
  for (const NDArray& v : views_) {
    if (v.use_count() != 1 || v.dtype() != data.dtype() || !(v.device() == data.device()) || v.shape() != dims)
      continue;
    // Nobody else holds it: aimed at `data` here, as a new view would be.
    NDArrayNode* node = NDArrayNode::from_handle(v.handle());
    node->dl.data = static_cast<char*>(data->data) + data->byte_offset;  // as NDArray::view: offset 0
    node->dl.byte_offset = 0;
    node->storage = from->storage;
    return v;
  }
  NDArray v = data.view(dims, data.dtype());
  if (views_.size() < kMaxKept) views_.push_back(v);
  return v;
}

NDArray Recycler::shape_heap(StoragePool& pool, int64_t size) {
  for (const NDArray& h : heaps_)
    if (h.use_count() == 1 && h.shape()[0] == size) return h;
  NDArray h = pool.allocate_tensor({size}, DLDataType{kDLInt, 64, 1});
  if (heaps_.size() < kMaxKept) heaps_.push_back(h);
  return h;
}

void Recycler::release_idle() {
  // A tuple inside another is held until the outer one lets go: again until none does.
  for (bool cleared = true; cleared;) {
    cleared = false;
    for (const Ref<TupleObj>& t : tuples_)
      if (t->ref_count() == 1 && !t->items.empty()) {
        t->items.clear();
        cleared = true;
      }
  }
  for (const NDArray& v : views_)
    if (v.use_count() == 1) NDArrayNode::from_handle(v.handle())->storage.reset();
}

}  // namespace relax
}  // namespace graphrt
