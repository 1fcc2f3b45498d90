// The values a Relax VM register holds: TVM's ObjectRef / POD mix, as one
// variant. Heap kinds (shape, tuple, closure, storage) are graphrt Objects, so
// that they cross the packed calling convention as object handles unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "graphrt/ndarray.h"
#include "graphrt/object.h"
#include "graphrt/packed_func.h"
#include "graphrt/value.h"

namespace graphrt {
namespace relax {

// TVM's ShapeTuple: the core's (graphrt/value.h), so that every front door reads it.
using ShapeObj = ShapeObject;
struct TupleObj;
struct ClosureObj;
struct StorageObj;
struct StateObj;

// The VM special register's value: builtins that take it reach the VM
// through their call context, so it carries nothing.
struct VmHandle {};
using StringRef = std::shared_ptr<const std::string>;

using Value = std::variant<std::monostate, int64_t, double, DLDataType, StringRef, NDArray, Ref<ShapeObj>,
                           Ref<TupleObj>, Ref<ClosureObj>, Ref<StorageObj>, PackedFunc, VmHandle, Ref<StateObj>>;

// How deeply tuples and closures nest in `items`: 1 + the deepest item that
// is one (0 when none is). Destroying or walking a value recurses once per
// level, so the builtins that build them refuse more than kMaxValueDepth.
size_t nested_depth(const std::vector<Value>& items);
constexpr size_t kMaxValueDepth = 1000;

// Value::index() of each kind, in the variant's order.
enum ValueIndex : size_t {
  kNoneValue, kIntValue, kFloatValue, kDTypeValue, kStringValue, kTensorValue, kShapeValue,
  kTupleValue, kClosureValue, kStorageValue, kFunctionValue, kVmValue, kStateValue
};

// TVM's Array<ObjectRef>, what a Relax tuple is at run time: the core's ArrayObject over
// register values, handed out through the packed convention (value_to_ret).
struct TupleObj : ArrayObject {
  explicit TupleObj(std::vector<Value> v) : items(std::move(v)), depth(nested_depth(items)) {}
  size_t size() const override { return items.size(); }
  void get_item(size_t index, RetValue* out) const override;
  std::vector<Value> items;
  size_t depth;  // nested_depth(items) when made (tuple_reset_item only lowers it)
};

// A function of the executable with arguments bound after the caller's ones
// (TVM's VMClosure with BindLastArgs); a function-table reference in the code
// (argument kind 3) is one with nothing bound, unless the entry is a kernel,
// which is passed as its PackedFunc.
struct ClosureObj : Object {
  ClosureObj(int64_t f, std::vector<Value> b) : function(f), bound(std::move(b)), depth(nested_depth(bound)) {}
  ClosureObj(PackedFunc p, std::vector<Value> b)
      : function(-1), packed(std::move(p)), bound(std::move(b)), depth(nested_depth(bound)) {}
  const char* object_type_key() const override { return "relax.vm.Closure"; }
  int64_t function;   // function-table index, or -1 for `packed`
  PackedFunc packed;  // a kernel or global function
  std::vector<Value> bound;
  size_t depth;  // nested_depth(bound)
};

// An allocation tensors are carved from (alloc_storage / alloc_tensor): a
// byte array whose memory returns to the VM's pool when the last view goes.
// It belongs to the VM that made it (its view list is that VM's to change).
struct StorageObj : Object {
  explicit StorageObj(NDArray b) : bytes(std::move(b)) {}
  const char* object_type_key() const override { return "relax.Storage"; }
  // A view of `dims` / `dtype` at `offset` (in range: the caller checked):
  // one made before that nobody holds now, else a new one, kept for later.
  NDArray view(uint64_t offset, const std::vector<int64_t>& dims, DLDataType dtype);
  // True when the one reference's holder is the only one that can reach the
  // memory: no view of it held anywhere else (storage_cache.cc).
  bool idle() const;

  NDArray bytes;
  std::vector<NDArray> views;  // kept views, at most kMaxKeptViews
  static constexpr size_t kMaxKeptViews = 8;
};

// A state object that builtins keep from call to call and hand back to the
// caller between calls (TVM's KVState: the paged KV cache, kv_cache/). Its
// family's builtins know its concrete type; the VM only carries it.
struct StateObj : Object {};

// The value's kind as TVM users read it ("NDArray", "Shape", "Tuple", ...).
const char* value_kind_name(const Value& v);

inline Value make_shape(std::vector<int64_t> dims) { return Ref<ShapeObj>(make_ref<ShapeObj>(std::move(dims))); }
inline Value make_tuple(std::vector<Value> items) { return Ref<TupleObj>(make_ref<TupleObj>(std::move(items))); }

}  // namespace relax
}  // namespace graphrt
