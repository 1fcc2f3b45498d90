#include "backends/relax/disassembler.h"

#include <sstream>

#include "backends/relax/instruction.h"

namespace graphrt {
namespace relax {

namespace {

std::string constant_summary(const Value& v) {
  switch (v.index()) {
    case kTensorValue: {
      const NDArray& a = std::get<NDArray>(v);
      return dtype_to_string(a.dtype()) + shape_to_string(a.shape());
    }
    case kDTypeValue:
      return dtype_to_string(std::get<DLDataType>(v));
    case kShapeValue: {
      std::string s = "shapetuple[";
      const auto& dims = std::get<Ref<ShapeObj>>(v)->dims;
      for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
      return s + "]";
    }
    case kStringValue:
      return "\"" + *std::get<StringRef>(v) + "\"";
    case kIntValue:
      return std::to_string(std::get<int64_t>(v));
    case kFloatValue:
      return std::to_string(std::get<double>(v));
    default:
      return value_kind_name(v);
  }
}

std::string register_name(int64_t r) {
  if (r == kVoidRegister) return "%void";
  if (r == kVMRegister) return "%vm";
  return "%" + std::to_string(r);
}

std::string argument_text(const Executable& exe, int64_t word) {
  const int64_t v = arg_value(word);
  switch (arg_kind(word)) {
    case ArgKind::kRegister: return register_name(v);
    case ArgKind::kImmediate: return "i" + std::to_string(v);
    case ArgKind::kConstIdx: return "c[" + std::to_string(v) + "]";
    case ArgKind::kFuncIdx: return "f[" + exe.functions[static_cast<size_t>(v)].name + "]";
  }
  return "?";
}

void instruction_text(std::ostream& os, const Executable& exe, int64_t pc) {
  const RawInstruction in = read_instruction(exe, pc);
  switch (in.op) {
    case Opcode::kCall: {
      os << "  call  " << exe.functions[static_cast<size_t>(in.func_index)].name << " in: ";
      for (int64_t i = 0; i < in.num_args; ++i) os << (i ? ", " : "") << argument_text(exe, in.args[i]);
      os << " dst: " << register_name(in.dst) << "\n";
      return;
    }
    case Opcode::kRet: os << "  ret   " << register_name(in.reg) << "\n"; return;
    case Opcode::kGoto: os << "  goto  " << in.offset << "\n"; return;
    case Opcode::kIf: os << "  If    " << register_name(in.reg) << ", " << in.offset << "\n"; return;
  }
}

}  // namespace

std::string executable_stats(const Executable& exe) {
  std::ostringstream os;
  os << "Relax VM executable statistics:\n  Constant pool (# " << exe.constants.size() << "): [";
  for (size_t i = 0; i < exe.constants.size(); ++i) os << (i ? ", " : "") << constant_summary(exe.constants[i]);
  os << "]\n  Globals (#" << exe.functions.size() << "): [";
  for (size_t i = 0; i < exe.functions.size(); ++i) os << (i ? ", " : "") << exe.functions[i].name;
  os << "]\n";
  return os.str();
}

std::string executable_text(const Executable& exe) {
  std::ostringstream os;
  for (const FunctionInfo& f : exe.functions) {
    if (f.kind != FunctionKind::kVMFunc) {
      os << "@" << f.name << " packed_func;\n\n";
      continue;
    }
    os << "@" << f.name << "(";
    for (size_t i = 0; i < f.param_names.size(); ++i) os << (i ? ", " : "") << f.param_names[i];
    os << "):\n";
    for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) instruction_text(os, exe, pc);
    os << "\n";
  }
  return os.str();
}

}  // namespace relax
}  // namespace graphrt
