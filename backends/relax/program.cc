#include "backends/relax/program.h"

#include "backends/relax/instruction.h"

namespace graphrt {
namespace relax {

namespace {

class Decoder {
 public:
  explicit Decoder(const Executable& exe) : exe_(exe) {
    program_.literals.push_back(std::monostate());  // literal 0: the void register
    program_.literals.push_back(VmHandle());        // literal 1: the VM register
  }

  Program run() {
    program_.code.resize(exe_.instr_offset.size(), Instr{Opcode::kRet, kDiscard, ~0, 0, 0, 0, 0});
    for (const FunctionInfo& f : exe_.functions) {
      if (f.kind != FunctionKind::kVMFunc) continue;
      for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) program_.code[static_cast<size_t>(pc)] = decode(pc);
    }
    return std::move(program_);
  }

 private:
  Operand literal(Value v) {
    program_.literals.push_back(std::move(v));
    return ~static_cast<Operand>(program_.literals.size() - 1);
  }

  Operand reg(int64_t r) {
    if (r == kVoidRegister) return ~0;
    if (r == kVMRegister) return ~1;
    return static_cast<Operand>(r);
  }

  Operand argument(int64_t word) {
    const int64_t v = arg_value(word);
    switch (arg_kind(word)) {
      case ArgKind::kRegister:
        return reg(v);
      case ArgKind::kImmediate:
        return literal(v);
      case ArgKind::kConstIdx:
        return literal(exe_.constants[static_cast<size_t>(v)]);
      case ArgKind::kFuncIdx:
        return literal(Ref<ClosureObj>(make_ref<ClosureObj>(v, std::vector<Value>())));
    }
    return ~0;
  }

  Instr decode(int64_t pc) {
    const RawInstruction raw = read_instruction(exe_, pc);
    Instr in{raw.op, kDiscard, ~0, 0, 0, 0, 0};
    switch (raw.op) {
      case Opcode::kCall:
        in.dst = raw.dst >= kBeginSpecialRegister ? kDiscard : static_cast<int32_t>(raw.dst);
        in.func = static_cast<int32_t>(raw.func_index);
        in.arg_begin = static_cast<uint32_t>(program_.args.size());
        in.num_args = static_cast<uint32_t>(raw.num_args);
        for (int64_t i = 0; i < raw.num_args; ++i) program_.args.push_back(argument(raw.args[i]));
        break;
      case Opcode::kRet:
        in.operand = reg(raw.reg);
        break;
      case Opcode::kGoto:
        in.offset = static_cast<int32_t>(raw.offset);
        break;
      case Opcode::kIf:
        in.operand = reg(raw.reg);
        in.offset = static_cast<int32_t>(raw.offset);
        break;
    }
    return in;
  }

  const Executable& exe_;
  Program program_;
};

}  // namespace

Program decode_program(const Executable& exe) { return Decoder(exe).run(); }

}  // namespace relax
}  // namespace graphrt
