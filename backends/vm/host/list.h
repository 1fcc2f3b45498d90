// graphrt::vm::List — a growable list of Values (vm.list<?> in IREE terms).
//
// Elements are variants, so one list can hold mixed types; a typed get of an
// element with another type is a trap rather than a silent conversion.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/vm/host/ref.h"
#include "backends/vm/host/vm_value.h"

namespace graphrt {
namespace vm {

class List : public VmObject {
 public:
  static constexpr ObjectKind kKind = ObjectKind::kList;
  ObjectKind kind() const override { return kKind; }

  int64_t size() const { return static_cast<int64_t>(items_.size()); }
  // New elements are i32 zero.
  void resize(int64_t size);
  void reserve(int64_t capacity);
  const Value& get(int64_t index, ValueType expected) const;
  // Traps when `value` is a list that (transitively) contains this list:
  // refcounted cycles would never be freed.
  void set(int64_t index, Value value);
  // Unchecked element access for traversal (index must be < size()).
  const Value& at(int64_t index) const { return items_[static_cast<size_t>(index)]; }

 private:
  void check_index(int64_t index) const;
  std::vector<Value> items_;
};

}  // namespace vm
}  // namespace graphrt
