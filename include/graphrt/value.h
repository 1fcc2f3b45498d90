// What a function returns, typed: a tensor, a (nested) tuple of values, a
// shape, an int, a float, a string, nothing, or another object (a closure, a
// KV cache). The containers are core objects, TVM's at the ABI (type keys
// "Array" and "runtime.ShapeTuple", so that TVM's front ends read them as
// theirs); graphrt::Value reads any of them in one place, with no call by
// name. The C API's graphrt_value_* functions are the same reader for C and
// Python (graphrt/c_api.h).
//
//   graphrt::Value y = graphrt::Value::from(ret);      // a packed function's result
//   if (y.is_tuple()) y.items[0].tensor ...; y.flatten() the tensors, depth first
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/ndarray.h"
#include "graphrt/object.h"
#include "graphrt/packed_func.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// TVM's ShapeTuple: a shape as a value (a Relax R.Shape at run time).
class ShapeObject final : public Object {
 public:
  explicit ShapeObject(std::vector<int64_t> d) : dims(std::move(d)) {}
  const char* object_type_key() const override { return "runtime.ShapeTuple"; }
  std::vector<int64_t> dims;
};

// TVM's Array: a tuple of values. Who makes one keeps its items in its own form (a Relax
// VM's registers) and hands each out as a packed value; the core reads tuples through this
// face only.
class ArrayObject : public Object {
 public:
  const char* object_type_key() const override { return "Array"; }
  virtual size_t size() const = 0;
  // Item `index` (below size(): the caller checked) as a packed value; objects gain a reference.
  virtual void get_item(size_t index, RetValue* out) const = 0;
};

// A tuple made outside a VM (a graph runner's outputs handed to C as one value): its items
// kept as packed values.
class TupleObject final : public ArrayObject {
 public:
  explicit TupleObject(std::vector<RetValue> items) : items_(std::move(items)) {}
  size_t size() const override { return items_.size(); }
  void get_item(size_t index, RetValue* out) const override { *out = items_[index]; }

 private:
  std::vector<RetValue> items_;
};

// A result read whole: tuples item by item, shapes as their dims.
struct Value {
  enum class Kind { kNone, kTensor, kTuple, kShape, kInt, kFloat, kString, kObject };
  Kind kind = Kind::kNone;
  NDArray tensor;              // kTensor
  std::vector<Value> items;    // kTuple
  std::vector<int64_t> dims;   // kShape
  int64_t int_value = 0;       // kInt (bools too)
  double float_value = 0;      // kFloat
  std::string string_value;    // kString (strings and bytes)
  Ref<Object> object;          // kObject: what is none of the above (modules, functions, closures, states)

  bool is_tuple() const { return kind == Kind::kTuple; }
  // The tensors, depth first: TVM's output_<i> order for a tuple result.
  std::vector<NDArray> flatten() const;
  // Appends them to *out, for a caller that reuses one vector from call to call.
  void append_tensors(std::vector<NDArray>* out) const;
  // "tensor", "tuple[tensor, tuple[shape, int]]", ...: the structure, for messages and listings.
  std::string structure() const;

  // A packed value as a Value. A tuple nested deeper than kMaxDepth is refused
  // (resource exhausted); a value that is none of the kinds (a raw handle, a device, a
  // dtype) is a type mismatch naming its type code.
  static Value from(const RetValue& r);
  static Value from_arg(const TVMArgs& args, int index);
  // The other way: tuples as TupleObjects, shapes as ShapeObjects, the rest as themselves.
  RetValue to_packed() const;
  static constexpr size_t kMaxDepth = 1000;
};

// The name of a kind: "tensor", "tuple", "shape", "int", "float", "string", "none", "object".
const char* value_kind_name(Value::Kind kind);
// The kind of packed value `index` of `args` (tuples and shapes are told by their objects),
// without reading it: what the C API's graphrt_value_kind reports.
Value::Kind value_kind_of(const TVMArgs& args, int index);

}  // namespace graphrt
#pragma GCC visibility pop
