// The bytecode interpreter: a register machine with a computed-goto dispatch
// loop (GCC/clang) or a tight switch elsewhere. Internal calls push frames on
// the same Stack and stay in the loop; imports go through VmModule::call.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/host/stack.h"

namespace graphrt {
namespace vm {

// Runs internal function `function` of `module` (verified) with `args`
// matching its signature; appends results. Traps are graphrt::Error with
// "module", "function" and "offset" context of the innermost bytecode frame.
void interpret(Stack& stack, const BytecodeModule& module, ModuleState& state, uint32_t function,
               const std::vector<Value>& args, std::vector<Value>* results);

}  // namespace vm
}  // namespace graphrt
