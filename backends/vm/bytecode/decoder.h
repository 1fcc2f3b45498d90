// Generic, bounds-checked instruction decoding driven by the opcode table.
// Used by the verifier and the disassembler (the interpreter trusts verified
// code and decodes inline).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/vm/bytecode/opcodes.h"
#include "backends/vm/host/vm_value.h"

namespace graphrt {
namespace vm {

struct Operand {
  char kind = 0;           // operand kind letter from opcodes.h
  uint16_t reg = 0;        // register kinds
  uint32_t u32 = 0;        // L, s, function of c/v
  int32_t imm_i32 = 0;
  int64_t imm_i64 = 0;
  float imm_f32 = 0;
  double imm_f64 = 0;
  std::vector<uint16_t> segments;  // v
  std::vector<uint16_t> args;      // c, v, R
  std::vector<uint16_t> results;   // c, v
  std::vector<uint32_t> targets;   // t
};

struct Instruction {
  uint8_t opcode = 0;
  const OpInfo* info = nullptr;
  uint32_t offset = 0;
  uint32_t length = 0;
  std::vector<Operand> operands;
};

// Throws graphrt::Error ("unknown opcode" / "bytecode data overrun") with an
// "offset" context.
Instruction decode_instruction(const std::vector<uint8_t>& code, uint32_t pc);

// True for the register operand kinds; *type gets the bank.
bool register_kind(char kind, ValueType* type);

}  // namespace vm
}  // namespace graphrt
