// TVM's packed calling convention (v0.13-v0.20: TVMValue + type code) as the
// Relax VM uses it: register values in and out of packed calls, kernels and
// the VM module's own callers. The interpreter reaches packed functions only
// through this file, so another convention (tvm-ffi's TVMFFIAny) can sit
// beside it.
#pragma once

#include "graphrt/packed_func.h"
#include "backends/relax/value.h"

namespace graphrt {
namespace relax {

// Calls `f` with `args` (register values); the result lands in *ret. A
// generated kernel is called directly; its failure throws with its message.
void call_packed(const PackedFunc& f, const Value* const* args, int num_args, Value* ret);

// Argument `i` of a packed call as a register value (NDArrays shared; a
// DLTensor handle is borrowed: the caller keeps it alive during the call).
Value value_from_arg(const TVMArgs& args, int i);
// A register value as a packed return value.
void value_to_ret(const Value& v, RetValue* ret);

}  // namespace relax
}  // namespace graphrt
