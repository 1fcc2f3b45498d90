#include "backends/relax/instruction.h"

#include <string>

namespace graphrt {
namespace relax {

namespace {

Error bad(int64_t index, const std::string& field, const std::string& message) {
  return Error("instruction " + std::to_string(index) + ": " + message)
      .with("field", field)
      .with("instruction", std::to_string(index));
}

}  // namespace

RawInstruction read_instruction(const Executable& exe, int64_t index) {
  const auto& words = exe.instr_data;
  const int64_t size = static_cast<int64_t>(words.size());
  const int64_t at = exe.instr_offset.at(static_cast<size_t>(index));
  if (at < 0 || at >= size) throw Error(ErrorKind::kOutOfRange, "instruction " + std::to_string(index) + " starts at word " +
                                                                    std::to_string(at) + ", outside the " + std::to_string(size) + " code words")
                                  .with("field", "instruction offset");
  const auto need = [&](int64_t n, const char* field) {
    if (n > size - at) throw bad(index, field, "runs past the end of the code");
  };
  RawInstruction in;
  const int64_t op = words[at];
  switch (op) {
    case static_cast<int64_t>(Opcode::kCall):
      need(4, "call header");
      in.op = Opcode::kCall;
      in.dst = words[at + 1];
      in.func_index = words[at + 2];
      in.num_args = words[at + 3];
      if (in.num_args < 0 || in.num_args > size - at - 4) throw bad(index, "num_args", "argument count " + std::to_string(in.num_args) + " runs past the code");
      in.args = words.data() + at + 4;
      return in;
    case static_cast<int64_t>(Opcode::kRet):
      need(2, "ret register");
      in.op = Opcode::kRet;
      in.reg = words[at + 1];
      return in;
    case static_cast<int64_t>(Opcode::kGoto):
      need(2, "goto offset");
      in.op = Opcode::kGoto;
      in.offset = words[at + 1];
      return in;
    case static_cast<int64_t>(Opcode::kIf):
      need(3, "if operands");
      in.op = Opcode::kIf;
      in.reg = words[at + 1];
      in.offset = words[at + 2];
      return in;
    default:
      throw bad(index, "opcode", "unknown opcode " + std::to_string(op));
  }
}

}  // namespace relax
}  // namespace graphrt
