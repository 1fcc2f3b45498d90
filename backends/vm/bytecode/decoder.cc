#include "backends/vm/bytecode/decoder.h"

#include <cstring>
#include <string>

#include "graphrt/error.h"

namespace graphrt {
namespace vm {
namespace {

class Cursor {
 public:
  Cursor(const std::vector<uint8_t>& code, uint32_t start) : code_(code), start_(start), pos_(start) {}
  template <typename T>
  T read() {
    if (sizeof(T) > code_.size() - pos_) {
      throw Error("bytecode data overrun").with("offset", std::to_string(start_));
    }
    T v;
    std::memcpy(&v, code_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::vector<uint16_t> reg_list() {
    std::vector<uint16_t> regs(read<uint16_t>());
    for (uint16_t& r : regs) r = read<uint16_t>();
    return regs;
  }
  size_t pos() const { return pos_; }

 private:
  const std::vector<uint8_t>& code_;
  uint32_t start_;
  size_t pos_;
};

Operand decode_operand(char kind, Cursor& c) {
  Operand op;
  op.kind = kind;
  ValueType type;
  if (register_kind(kind, &type)) {
    op.reg = c.read<uint16_t>();
    return op;
  }
  switch (kind) {
    case 'n': op.imm_i32 = c.read<int32_t>(); break;
    case 'N': op.imm_i64 = c.read<int64_t>(); break;
    case 'x': op.imm_f32 = c.read<float>(); break;
    case 'X': op.imm_f64 = c.read<double>(); break;
    case 'L':
    case 's':
    case 'g': op.u32 = c.read<uint32_t>(); break;
    case 'c':
      op.u32 = c.read<uint32_t>();
      op.args = c.reg_list();
      op.results = c.reg_list();
      break;
    case 'v':
      op.u32 = c.read<uint32_t>();
      op.segments = c.reg_list();
      op.args = c.reg_list();
      op.results = c.reg_list();
      break;
    case 't':
      op.targets.resize(c.read<uint16_t>());
      for (uint32_t& t : op.targets) t = c.read<uint32_t>();
      break;
    case 'R': op.args = c.reg_list(); break;
    default: throw Error(std::string("opcode table has unknown operand kind ") + kind);
  }
  return op;
}

}  // namespace

bool register_kind(char kind, ValueType* type) {
  switch (kind) {
    case 'i': *type = ValueType::kI32; return true;
    case 'I': *type = ValueType::kI64; return true;
    case 'f': *type = ValueType::kF32; return true;
    case 'F': *type = ValueType::kF64; return true;
    case 'r': *type = ValueType::kRef; return true;
    default: return false;
  }
}

Instruction decode_instruction(const std::vector<uint8_t>& code, uint32_t pc) {
  Instruction inst;
  inst.offset = pc;
  if (pc >= code.size()) throw Error("bytecode data overrun").with("offset", std::to_string(pc));
  inst.opcode = code[pc];
  inst.info = op_info(inst.opcode);
  if (!inst.info) {
    throw Error("unknown opcode " + std::to_string(inst.opcode)).with("offset", std::to_string(pc));
  }
  Cursor c(code, pc);
  c.read<uint8_t>();
  for (const char* k = inst.info->operands; *k; ++k) inst.operands.push_back(decode_operand(*k, c));
  inst.length = static_cast<uint32_t>(c.pos() - pc);
  return inst;
}

}  // namespace vm
}  // namespace graphrt
