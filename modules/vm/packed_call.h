// Calls of VM exports through graphrt's PackedFunc ABI (C API, Python, graph
// nodes): TVM arguments are converted by the export's signature, results come
// back as a TVM return value.
//
//   i32 / i64 <- int (range-checked)      f32 / f64 <- float or int
//   ref       <- DLTensor* / NDArray (borrowed for the call), bytes (a
//                read-only vm.buffer), None (null ref)
//   results   -> none: None; one: int / float / NDArray (a copy of the
//                tensor) / bytes (a buffer's contents); several: an error
//                (use graphrt-vm-run or the C++ API).
//
// This layer needs libgraphrt's core (NDArray, PackedFunc); the VM itself does not.
#pragma once

#include <memory>
#include <string>

#include "graphrt/module.h"
#include "graphrt/packed_func.h"
#include "modules/vm/program.h"

namespace graphrt {
namespace vm {

// A PackedFunc that calls export `name` of `program` (which must have it);
// `keep` is held for the function's lifetime.
PackedFunc make_packed_export(std::shared_ptr<Program> program, const std::string& name, graphrt::Module keep);

}  // namespace vm
}  // namespace graphrt
