// A verified executable decoded for the interpreter: instructions as fixed
// structs, every argument an index into the frame's registers or into the
// literal table (immediates, constants, function references, null, the VM),
// so the hot loop neither decodes words nor checks bounds.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/relax/executable.h"

namespace graphrt {
namespace relax {

// >= 0: a register of the frame; < 0: literal ~operand.
using Operand = int32_t;
constexpr int32_t kDiscard = -1;  // a Call's destination when the result is dropped

struct Instr {
  Opcode op;
  int32_t dst;     // Call: register or kDiscard
  Operand operand; // Ret: result; If: condition
  int32_t func;    // Call: function-table index
  int32_t offset;  // Goto / If: pc delta
  uint32_t arg_begin;
  uint32_t num_args;
};

struct Program {
  std::vector<Instr> code;        // indexed like the executable's instructions
  std::vector<Operand> args;      // Call arguments, Instr::arg_begin onwards
  std::vector<Value> literals;
};

// `exe` must have passed verify_executable().
Program decode_program(const Executable& exe);

}  // namespace relax
}  // namespace graphrt
