#include "backends/relax/verifier.h"

#include <string>

#include "backends/relax/instruction.h"

namespace graphrt {
namespace relax {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

Error out_of_range(const std::string& field, const std::string& message) {
  return Error(ErrorKind::kOutOfRange, message).with("field", field);
}

void verify_function_entry(const Executable& exe, const FunctionInfo& f) {
  const int64_t num_instr = static_cast<int64_t>(exe.instr_offset.size());
  if (f.kind == FunctionKind::kVMTIRFunc)
    throw Error(ErrorKind::kUnsupported, "VM-TIR functions (compiled exec mode) are not supported").with("field", "kind");
  if (f.kind == FunctionKind::kPackedFunc) return;
  if (f.start_instr < 0 || f.start_instr >= f.end_instr || f.end_instr > num_instr)
    throw out_of_range("start_instr", "code range [" + str(f.start_instr) + ", " + str(f.end_instr) +
                                          ") is empty or outside the " + str(num_instr) + " instructions");
  if (f.register_file_size < 0 || f.register_file_size > kMaxRegisterFileSize)
    throw Error(ErrorKind::kResourceExhausted, "register file size " + str(f.register_file_size) + " outside 0.." +
                                                   str(kMaxRegisterFileSize))
        .with("field", "register_file_size");
  if (f.num_args < 0 || f.num_args > f.register_file_size)
    throw out_of_range("num_args", "takes " + str(f.num_args) + " arguments but has a register file of " +
                                       str(f.register_file_size));
  if (static_cast<int64_t>(f.param_names.size()) != f.num_args)
    throw Error("has " + str(static_cast<int64_t>(f.param_names.size())) + " parameter names for " + str(f.num_args) +
                " arguments")
        .with("field", "param_names");
}

// A register operand: inside the file or one of the special registers.
void verify_register(const FunctionInfo& f, int64_t reg, const char* field) {
  if (reg == kVoidRegister || reg == kVMRegister) return;
  if (reg < 0 || reg >= f.register_file_size)
    throw out_of_range(field, std::string(field) + " register " + str(reg) + " outside the register file of " +
                                  str(f.register_file_size));
}

void verify_argument(const Executable& exe, const FunctionInfo& f, int64_t word) {
  const int64_t value = arg_value(word);
  switch (arg_kind(word)) {
    case ArgKind::kRegister:
      return verify_register(f, value, "argument");
    case ArgKind::kImmediate:
      return;
    case ArgKind::kConstIdx:
      if (value < 0 || value >= static_cast<int64_t>(exe.constants.size()))
        throw out_of_range("constant index", "constant index " + str(value) + " outside the pool of " +
                                                 str(static_cast<int64_t>(exe.constants.size())));
      return;
    case ArgKind::kFuncIdx:
      if (value < 0 || value >= static_cast<int64_t>(exe.functions.size()))
        throw out_of_range("function index", "function index " + str(value) + " outside the table of " +
                                                 str(static_cast<int64_t>(exe.functions.size())));
      return;
  }
  throw Error("argument kind " + str(static_cast<int>(arg_kind(word))) + " is not 0..3").with("field", "argument kind");
}

void verify_call(const Executable& exe, const FunctionInfo& f, const RawInstruction& in) {
  if (in.dst != kVoidRegister && in.dst != kVMRegister) verify_register(f, in.dst, "destination");
  if (in.func_index < 0 || in.func_index >= static_cast<int64_t>(exe.functions.size()))
    throw out_of_range("function index", "calls function index " + str(in.func_index) + " outside the table of " +
                                             str(static_cast<int64_t>(exe.functions.size())));
  const FunctionInfo& callee = exe.functions[static_cast<size_t>(in.func_index)];
  if (callee.kind == FunctionKind::kVMFunc && callee.num_args != in.num_args)
    throw Error("calls " + quote_untrusted(callee.name) + " with " + str(in.num_args) + " arguments; it takes " + str(callee.num_args))
        .with("field", "num_args");
  for (int64_t i = 0; i < in.num_args; ++i) verify_argument(exe, f, in.args[i]);
}

void verify_target(const FunctionInfo& f, int64_t pc, int64_t offset, const char* field) {
  // Overflow-safe: offsets are arbitrary words.
  if (offset < f.start_instr - pc || offset >= f.end_instr - pc)
    throw out_of_range(field, "offset " + str(offset) + " from instruction " + str(pc) + " leaves the function's [" +
                                  str(f.start_instr) + ", " + str(f.end_instr) + ")");
}

void verify_instruction(const Executable& exe, const FunctionInfo& f, int64_t pc) {
  const RawInstruction in = read_instruction(exe, pc);
  switch (in.op) {
    case Opcode::kCall:
      verify_call(exe, f, in);
      verify_target(f, pc, 1, "next instruction");
      return;
    case Opcode::kRet:
      verify_register(f, in.reg, "result");
      return;
    case Opcode::kGoto:
      verify_target(f, pc, in.offset, "goto offset");
      return;
    case Opcode::kIf:
      if (in.reg == kVoidRegister || in.reg == kVMRegister)
        throw out_of_range("condition", "If reads special register " + str(in.reg));
      verify_register(f, in.reg, "condition");
      verify_target(f, pc, 1, "next instruction");
      verify_target(f, pc, in.offset, "if false_offset");
      return;
  }
}

void verify_function(const Executable& exe, const FunctionInfo& f) {
  verify_function_entry(exe, f);
  if (f.kind != FunctionKind::kVMFunc) return;
  for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) {
    try {
      verify_instruction(exe, f, pc);
    } catch (Error& e) {
      if (e.context_value("instruction").empty()) e.with("instruction", str(pc));
      throw;
    }
  }
}

}  // namespace

void verify_executable(const Executable& exe) {
  for (const FunctionInfo& f : exe.functions) {
    try {
      verify_function(exe, f);
    } catch (Error& e) {
      Error outer(e.kind(), "relax function " + quote_untrusted(f.name) + ": " + e.message());
      for (const auto& kv : e.context()) outer.with(kv.first, kv.second);
      throw outer.with("function", f.name);
    }
  }
}

}  // namespace relax
}  // namespace graphrt
