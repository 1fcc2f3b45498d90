// The load-time verifier. Every bytecode module passes it before it can be
// registered or executed, so the interpreter can decode without bounds checks.
//
// Rules (each has a test in tests/backends/vm/verifier_test.cc):
//  module   : non-empty name without '.', named dependencies, fully-qualified
//             imports with valid signatures, unique function names
//  function : valid non-variadic signature, register counts within limits and
//             large enough for the arguments, non-empty body
//  decoding : known opcodes, no operand past the end ("bytecode data overrun")
//  registers: every register operand < the function's count for its bank
//  rodata   : constant-pool indices < rodata count
//  globals  : unique names without '.'; global ordinals < global count and
//             the global's type equals the bank of the op's register
//  calls    : function ordinals in range; argument/result register lists match
//             the callee's signature; variadic calls only to imports with
//             segment sizes matching the spans
//  returns  : `ret` registers match the function's result signature
//  blocks   : the body starts with `block`, every block ends with a
//             terminator, `block` never appears inside a block, nothing
//             follows a terminator but `block`, branch targets are block starts
// Errors are graphrt::Error with "module", "function" and "offset" context.
#pragma once

#include "backends/vm/bytecode/module_def.h"

namespace graphrt {
namespace vm {

void verify_module(const ModuleDef& def);

}  // namespace vm
}  // namespace graphrt
