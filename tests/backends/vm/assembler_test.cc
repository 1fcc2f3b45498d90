// Assembler input the fuzzer (fuzz/vm_asm_fuzz.cc) found or probed: every
// refusal names the line at fault and what is wrong; nothing is silently
// truncated or rounded into different bytecode.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

#include "graphrt/error.h"
#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/decoder.h"
#include "backends/vm/bytecode/opcodes.h"

namespace {

using namespace graphrt::vm;

// The error assembling `text` throws, checked to name `line` and contain `why`.
void expect_refused(const std::string& text, const std::string& line, const std::string& why) {
  try {
    assemble(text);
    ADD_FAILURE() << "assembled:\n" << text;
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("line"), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

// The immediate operand of the first instruction after the entry block of function 0.
Instruction first_instruction(const ModuleDef& def) {
  const std::vector<uint8_t>& code = def.functions.at(0).code;
  const Instruction block = decode_instruction(code, 0);
  return decode_instruction(code, block.length);
}

TEST(VmAssembler, MalformedSignaturesNameTheirLine) {
  // Found by the fuzzer: these escaped as bare "malformed signature" errors without a line.
  expect_refused("module m\nfunc f \"1v\"\n  ret\nend\n", "2", "version byte must be '0'");
  expect_refused("module m\n\nfunc f \"0i~\"\n  ret\nend\n", "3", "unknown type letter '~'");
  expect_refused("module m\nimport other.f \"0iC\"\nfunc g \"0i_i\"\n  call @other.f(%i0) -> (%i0)\n  ret %i0\nend\n",
                 "2", "unterminated C..D span");
  // An import is checked where it is declared, called or not.
  expect_refused("module m\nimport other.f \"0i_Ci\"\nfunc g \"0v\"\n  ret\nend\n", "2", "variadic span in results");
}

TEST(VmAssembler, FloatImmediatesOutOfRangeAreRefused) {
  expect_refused("module m\nfunc g \"0_f\"\n  const.f32 %f0, 3.5e38\n  ret %f0\nend\n", "3",
                 "f32 immediate out of range '3.5e38'");
  expect_refused("module m\nfunc g \"0_f\"\n  const.f32 %f0, -1e39\n  ret %f0\nend\n", "3", "f32 immediate out of range");
  expect_refused("module m\nfunc g \"0_F\"\n  const.f64 %F0, 1e309\n  ret %F0\nend\n", "3", "float out of range '1e309'");
  // The extremes the disassembler prints still assemble exactly.
  const ModuleDef max32 = assemble("module m\nfunc g \"0_f\"\n  const.f32 %f0, 3.40282347e+38\n  ret %f0\nend\n");
  EXPECT_EQ(first_instruction(max32).operands.at(1).imm_f32, FLT_MAX);
  const ModuleDef inf32 = assemble("module m\nfunc g \"0_f\"\n  const.f32 %f0, -inf\n  ret %f0\nend\n");
  EXPECT_EQ(first_instruction(inf32).operands.at(1).imm_f32, -INFINITY);
  const ModuleDef tiny64 =
      assemble("module m\nfunc g \"0_F\"\n  const.f64 %F0, 4.9406564584124654e-324\n  ret %F0\nend\n");
  EXPECT_EQ(first_instruction(tiny64).operands.at(1).imm_f64, 4.9406564584124654e-324);
}

TEST(VmAssembler, RegisterIndexMustFitAU16Count) {
  // %i65535 would need a count of 65536, which wrapped to 0 registers.
  expect_refused("module m\nfunc g \"0v\"\n  const.i32 %i65535, 1\n  ret\nend\n", "3", "integer out of range '65535'");
  const ModuleDef def = assemble("module m\nfunc g \"0v\"\n  const.i32 %i65534, 1\n  ret\nend\n");
  EXPECT_EQ(def.functions.at(0).registers[0], 65535);
}

TEST(VmAssembler, ListsLongerThanU16CountsAreRefused) {
  // A call with 65536 arguments had its u16 count wrap to 0, the registers
  // then decoding as further instructions.
  auto call_with = [](size_t n) {
    std::string text = "module m\nimport other.f \"0" + std::string(n, 'i') + "\"\nfunc g \"0v\"\n  call @other.f(";
    for (size_t k = 0; k < n; ++k) text += k ? ", %i0" : "%i0";
    return text + ")\n  ret\nend\n";
  };
  expect_refused(call_with(65536), "4", "too many registers in the list (65536, at most 65535)");
  const ModuleDef def = assemble(call_with(65535));
  EXPECT_EQ(first_instruction(def).operands.at(0).args.size(), 65535u);
  // Branch tables likewise.
  std::string table = "module m\nfunc g \"0i\"\n  br_table %i0, out, [";
  for (size_t k = 0; k < 65536; ++k) table += k ? ", out" : "out";
  expect_refused(table + "]\nout:\n  ret\nend\n", "3", "too many branch table targets");
}

}  // namespace
