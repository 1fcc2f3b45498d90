// One instruction of the code section, located and bounds-checked: the
// verifier and the decoder read instructions only through this.
#pragma once

#include <cstdint>

#include "backends/relax/executable.h"

namespace graphrt {
namespace relax {

struct RawInstruction {
  Opcode op = Opcode::kRet;
  int64_t dst = 0;         // Call
  int64_t func_index = 0;  // Call
  int64_t num_args = 0;    // Call
  const int64_t* args = nullptr;  // Call: num_args argument words
  int64_t reg = 0;         // Ret: the result; If: the condition
  int64_t offset = 0;      // Goto: pc delta; If: pc delta when false
};

// Instruction `index` of `exe`; throws (naming the instruction and the field)
// when its words run past the code or its opcode is unknown.
RawInstruction read_instruction(const Executable& exe, int64_t index);

}  // namespace relax
}  // namespace graphrt
