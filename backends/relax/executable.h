// A Relax VM executable as its record stores it (TVM's VMExecutable): the
// function table, the constant pool and the code, read by executable_reader
// and checked by the verifier before anything runs it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/relax/value.h"

namespace graphrt {
namespace relax {

constexpr uint64_t kExecutableMagic = 0xD225DE2F4214151DULL;
// TVM v0.22+: the same format with a memory-scope section and constants tagged
// by tvm-ffi type indices.
constexpr uint64_t kExecutableMagicV2 = 0xD225DE2F4214151EULL;
constexpr const char* kExecutableVersion = "0.14";

enum class FunctionKind : int32_t { kPackedFunc = 0, kVMFunc = 1, kVMTIRFunc = 2 };

struct FunctionInfo {
  FunctionKind kind = FunctionKind::kPackedFunc;
  std::string name;
  int64_t start_instr = 0;  // [start_instr, end_instr): instruction indices (VM functions)
  int64_t end_instr = 0;
  int64_t num_args = 0;  // -2 for packed functions
  int64_t register_file_size = 0;
  std::vector<std::string> param_names;
};

// The constant pool's tags.
enum class ConstantTag : int32_t { kNDArray = 0, kDLDataType = 1, kShapeTuple = 2, kString = 3, kInt = 4, kFloat = 5 };
// The V2 format's constant tags: tvm-ffi type indices (1, 3 and 5 change meaning).
enum class FfiConstantTag : int32_t { kInt = 1, kFloat = 3, kDataType = 5, kString = 65, kShape = 69, kTensor = 70 };

// Instruction words (every word an i64).
enum class Opcode : int64_t { kCall = 1, kRet = 2, kGoto = 3, kIf = 4 };
constexpr int kArgKindShift = 56;
constexpr int64_t kArgValueMask = (int64_t{1} << kArgKindShift) - 1;
enum class ArgKind : int { kRegister = 0, kImmediate = 1, kConstIdx = 2, kFuncIdx = 3 };
constexpr int64_t kBeginSpecialRegister = int64_t{1} << 54;
constexpr int64_t kVoidRegister = kBeginSpecialRegister;
constexpr int64_t kVMRegister = kBeginSpecialRegister + 1;

inline ArgKind arg_kind(int64_t word) { return static_cast<ArgKind>((static_cast<uint64_t>(word) >> kArgKindShift) & 0xFF); }
// The 56-bit value, sign-extended.
inline int64_t arg_value(int64_t word) {
  return static_cast<int64_t>(static_cast<uint64_t>(word & kArgValueMask) << 8) >> 8;
}
inline int64_t make_arg(ArgKind kind, int64_t value) {
  return static_cast<int64_t>((static_cast<uint64_t>(kind) << kArgKindShift) |
                              (static_cast<uint64_t>(value) & static_cast<uint64_t>(kArgValueMask)));
}

struct Executable {
  std::string type_key;  // the record it came from: relax.Executable or relax.VMExecutable
  std::string version;
  bool format_v2 = false;  // magic V2 (TVM v0.22+)
  std::vector<FunctionInfo> functions;
  // V2's memory-scope section: (index, scope) pairs as TVM writes them.
  std::vector<std::pair<int64_t, std::string>> memory_scopes;
  std::vector<Value> constants;  // NDArray, DLDataType, Shape, String, int or float
  std::vector<int64_t> instr_offset;  // word index of each instruction
  std::vector<int64_t> instr_data;

  // Index of the function named `name`, or -1.
  int64_t find_function(const std::string& name) const;
};

}  // namespace relax
}  // namespace graphrt
