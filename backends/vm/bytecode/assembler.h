// The VM text assembly format (.vmasm) -> ModuleDef.
//
//   module NAME [version N]
//   dependency NAME MIN_VERSION [optional] [from "lib.so@create?k=v"]
//   import MODULE.FUNCTION "CCONV" [optional]
//   global TYPE NAME                    TYPE: i32 i64 f32 f64 ref
//   rodata "bytes"                      (optional: string operands are interned)
//   func NAME "CCONV" [export] [regs i=N I=N f=N F=N r=N]
//   LABEL:                              starts a block (emits a `block` marker)
//     MNEMONIC OPERANDS                 e.g. add.i32 %i2, %i0, %i1
//   end
//
// Registers are %iN %IN %fN %FN %rN (bank = cconv letter). Operands follow the
// opcode table order (destination first). Calls: `call @fn(%i0, %i1) -> (%i2)`
// where @fn is a function of this module or an import (`@mod.fn`);
// `call.variadic @tensor.alloc(%i0, %i1, [%I0, %I1]) -> (%r0)` with [...] per
// span; `br_table %i0, default_label, [l0, l1]`; `ret %i0`; globals as
// `global.load.i32 %i0, @counter` / `global.store.i32 @counter, %i0`. Immediates accept
// decimal, 0x hex, floats, nan and inf; a float beyond its type's range is
// refused, not rounded to inf. Comments start with '#' or ';'.
// A body whose first instruction has no label gets an implicit entry block.
// Register counts default to the highest register used + 1.
// The output is not verified here; load it through BytecodeModule::create.
#pragma once

#include <string>

#include "backends/vm/bytecode/module_def.h"

namespace graphrt {
namespace vm {

// Throws graphrt::Error with a "line" context on every refusal (fuzzed by
// fuzz/vm_asm_fuzz.cc).
ModuleDef assemble(const std::string& source);

}  // namespace vm
}  // namespace graphrt
