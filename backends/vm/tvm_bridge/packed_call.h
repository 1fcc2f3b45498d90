// Calls of VM exports through graphrt's PackedFunc ABI (C API, Python, graph
// nodes): TVM arguments are converted by the export's signature, results come
// back as a TVM return value.
//
//   i32 / i64 <- int (range-checked)      f32 / f64 <- float or int
//   ref       <- DLTensor* (borrowed for the call) / NDArray (kept alive while
//                the VM holds it), bytes (a read-only vm.buffer), a list
//                object (ListObject), None (null ref)
//   results   -> none: None; one: int / float / NDArray (a copy of the
//                tensor) / bytes (a buffer's contents) / list object;
//                several: one list object of type key "graphrt.vm.Results"
//                holding them in order.
//
// Lists are read and built through global functions, so C callers need no VM
// header (register_list_functions):
//   graphrt.vm.list(types, item...)  a new list; `types` has one cconv letter
//                                    per item (i I f F r), converted as above
//   graphrt.vm.list_size(list)       element count
//   graphrt.vm.list_get(list, i)     element i, converted as a result
//   graphrt.vm.list_types(list)      the elements' cconv letters
//
// This layer needs libgraphrt's core (NDArray, PackedFunc); the VM itself does not.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/module.h"
#include "graphrt/object.h"
#include "graphrt/packed_func.h"
#include "graphrt/runtime.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/host/list.h"
#include "backends/vm/host/vm_value.h"

namespace graphrt {
namespace vm {

// A VM list as a graphrt object (kTVMObjectHandle). The list is shared, not
// copied: a list passed back into a VM call is the same list.
class ListObject : public graphrt::Object {
 public:
  ListObject(std::shared_ptr<List> list, bool results) : list_(std::move(list)), results_(results) {}
  const char* object_type_key() const override { return results_ ? "graphrt.vm.Results" : "graphrt.vm.List"; }
  const std::shared_ptr<List>& list() const { return list_; }

 private:
  std::shared_ptr<List> list_;
  bool results_;
};

// Runs one VM function with converted arguments.
using VmCall = std::function<std::vector<Value>(const std::vector<Value>& args)>;

// A PackedFunc that converts its arguments by `signature`, runs `call` and
// returns the results as above, all under `limits` (what its conversions
// allocate is charged there); `name` names the function in errors. Throws
// for a variadic signature (TVM arguments carry no span counts).
PackedFunc make_packed_call(const std::string& name, const std::string& signature, VmCall call,
                            std::shared_ptr<Limits> limits);

// Registers graphrt.vm.list, .list_size, .list_get and .list_types.
void register_list_functions(Runtime& runtime, const std::shared_ptr<Limits>& limits);

}  // namespace vm
}  // namespace graphrt
