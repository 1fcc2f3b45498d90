// One rejection per verifier rule; each names the function and offset.
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include <cstring>

#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/bytecode/decoder.h"
#include "backends/vm/bytecode/opcodes.h"
#include "backends/vm/bytecode/bytecode_verifier.h"

namespace {

using namespace graphrt::vm;

const char* kGood = R"(
module good version 1
func main "0i_i" export
entry:
  const.ref.rodata %r0, "text"
  call @helper(%i0) -> (%i1)
  br_if %i1, yes, no
yes:
  ret %i1
no:
  ret %i0
end
func helper "0i_i"
  ret %i0
end
func solo "0i_i"
  ret %i0
end
)";

// Expects verify_module to reject `def` with a message containing `what`,
// naming `function`, and (when offset >= 0) the byte offset.
void expect_rejected(const ModuleDef& def, const std::string& what, const std::string& function, int offset) {
  try {
    verify_module(def);
    FAIL() << "accepted, expected: " << what;
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("function"), function) << e.what();
    if (offset >= 0) {
      EXPECT_EQ(e.context_value("offset"), std::to_string(offset)) << e.what();
    }
  }
  EXPECT_THROW(BytecodeModule::create(def), graphrt::Error);
}

ModuleDef good() { return assemble(kGood); }

// Byte offset of the first instruction with `op` in main.
size_t find_op(const ModuleDef& def, Op op) {
  const auto& code = def.functions[0].code;
  for (uint32_t pc = 0; pc < code.size();) {
    const Instruction inst = decode_instruction(code, pc);
    if (inst.opcode == static_cast<uint8_t>(op)) return pc;
    pc += inst.length;
  }
  return code.size();
}

TEST(VmVerifier, AcceptsGoodModule) { EXPECT_NO_THROW(verify_module(good())); }

TEST(VmVerifier, RejectsRegisterOutOfRange) {
  ModuleDef def = good();
  def.functions[0].registers[static_cast<int>(ValueType::kRef)] = 0;
  expect_rejected(def, "register %r0 out of range", "main", 1);
}

TEST(VmVerifier, RejectsBranchIntoTheMiddleOfABlock) {
  ModuleDef def = good();
  const size_t at = find_op(def, Op::BrIf);
  const uint32_t bogus = 2;  // inside const.ref.rodata
  std::memcpy(&def.functions[0].code[at + 3], &bogus, 4);
  expect_rejected(def, "branch target 2 is not a block start", "main", static_cast<int>(at));
}

TEST(VmVerifier, RejectsBranchOutOfBounds) {
  ModuleDef def = good();
  const size_t at = find_op(def, Op::BrIf);
  const uint32_t bogus = 100000;
  std::memcpy(&def.functions[0].code[at + 7], &bogus, 4);
  expect_rejected(def, "is not a block start", "main", static_cast<int>(at));
}

TEST(VmVerifier, RejectsCallSignatureMismatch) {
  ModuleDef def = good();
  def.functions[1].signature = "0ii_i";  // callee now wants two arguments
  def.functions[1].registers[0] = 2;
  expect_rejected(def, "call argument count 1 does not match the signature (2)", "main",
                  static_cast<int>(find_op(def, Op::Call)));
}

TEST(VmVerifier, RejectsFunctionOrdinalOutOfRange) {
  ModuleDef def = good();
  const size_t at = find_op(def, Op::Call);
  const uint32_t bogus = 9;
  std::memcpy(&def.functions[0].code[at + 1], &bogus, 4);
  expect_rejected(def, "function ordinal 9 out of range", "main", static_cast<int>(at));
}

TEST(VmVerifier, RejectsImportOrdinalOutOfRange) {
  ModuleDef def = good();
  const size_t at = find_op(def, Op::Call);
  const uint32_t bogus = kImportBit | 0;
  std::memcpy(&def.functions[0].code[at + 1], &bogus, 4);
  expect_rejected(def, "import ordinal 0 out of range", "main", static_cast<int>(at));
}

TEST(VmVerifier, RejectsRodataIndexOutOfRange) {
  ModuleDef def = good();
  def.rodata.clear();
  expect_rejected(def, "rodata index 0 out of range", "main", 1);
}

TEST(VmVerifier, RejectsOperandOverrun) {
  ModuleDef def = good();
  auto& code = def.functions[0].code;
  code.resize(code.size() - 1);  // last `ret` loses half its register
  expect_rejected(def, "bytecode data overrun", "main", -1);
}

TEST(VmVerifier, RejectsUnknownOpcode) {
  ModuleDef def = good();
  def.functions[1].code = {static_cast<uint8_t>(Op::Block), 0xFE};
  expect_rejected(def, "unknown opcode 254", "helper", 1);
}

TEST(VmVerifier, RejectsMissingTerminator) {
  ModuleDef def = good();
  def.functions[1].code = {static_cast<uint8_t>(Op::Block), static_cast<uint8_t>(Op::Nop)};
  expect_rejected(def, "missing terminator", "helper", 2);
}

TEST(VmVerifier, RejectsCodeOutsideABlock) {
  ModuleDef def = good();
  def.functions[1].code.insert(def.functions[1].code.begin(), static_cast<uint8_t>(Op::Nop));
  expect_rejected(def, "instruction outside a block", "helper", 0);
}

TEST(VmVerifier, RejectsBlockInsideABlock) {
  ModuleDef def = good();
  auto& code = def.functions[1].code;
  code.insert(code.begin() + 1, static_cast<uint8_t>(Op::Block));
  expect_rejected(def, "block marker inside a block", "helper", 1);
}

TEST(VmVerifier, RejectsReturnMismatch) {
  ModuleDef def = good();
  def.functions[2].signature = "0i_ii";
  expect_rejected(def, "return value count 1 does not match the signature (2)", "solo", 1);
}

TEST(VmVerifier, RejectsVariadicBytecodeFunction) {
  ModuleDef def = good();
  def.functions[2].signature = "0CiD_i";
  expect_rejected(def, "cannot be variadic", "solo", 0);
}

TEST(VmVerifier, RejectsVariadicCallToInternalFunction) {
  ModuleDef def = assemble(R"(
module v version 1
import tensor.alloc "0iiCID_r"
func main "0_r" export
  call.variadic @tensor.alloc(%i0, %i1, [%I0]) -> (%r0)
  ret %r0
end
)");
  ASSERT_NO_THROW(verify_module(def));
  const uint32_t internal = 0;
  std::memcpy(&def.functions[0].code[2], &internal, 4);
  expect_rejected(def, "call.variadic to an internal function", "main", 1);
}

TEST(VmVerifier, RejectsEmptyBody) {
  ModuleDef def = good();
  def.functions[1].code.clear();
  expect_rejected(def, "empty function body", "helper", 0);
}

TEST(VmVerifier, RejectsArgumentsThatDoNotFit) {
  ModuleDef def = good();
  def.functions[1].registers[0] = 0;
  expect_rejected(def, "arguments do not fit", "helper", 0);
}

TEST(VmVerifier, RejectsModuleLevelProblems) {
  ModuleDef dup = good();
  dup.functions[1].name = "main";
  EXPECT_THROW(verify_module(dup), graphrt::Error);
  ModuleDef bad_import = good();
  bad_import.imports.push_back(ImportDecl{"noqualifier", "0v", false});
  EXPECT_THROW(verify_module(bad_import), graphrt::Error);
  ModuleDef bad_name = good();
  bad_name.name = "";
  EXPECT_THROW(verify_module(bad_name), graphrt::Error);
}

}  // namespace
