#include "backends/vm/bytecode/bytecode_disassembler.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "graphrt/error.h"
#include "backends/vm/bytecode/decoder.h"
#include "backends/vm/host/signature.h"

namespace graphrt {
namespace vm {
namespace {

std::string reg_name(ValueType type, uint16_t reg) {
  return std::string("%") + value_type_letter(type) + std::to_string(reg);
}

std::string label_name(uint32_t offset) { return "bb" + std::to_string(offset); }

// Shortest text that parses back to the same value (%.9g / %.17g round-trip).
std::string float_text(double v, int digits) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  return buf;
}

class FunctionPrinter {
 public:
  FunctionPrinter(const ModuleDef& def, const FunctionDef& fn, std::ostream& os) : def_(def), fn_(fn), os_(os) {}

  void run() {
    os_ << "func " << fn_.name << " " << quote_string(fn_.signature) << (fn_.exported ? " export" : "") << " regs";
    for (int b = 0; b < kValueTypeCount; ++b) {
      os_ << " " << value_type_letter(static_cast<ValueType>(b)) << "=" << fn_.registers[b];
    }
    os_ << "\n";
    for (uint32_t pc = 0; pc < fn_.code.size();) {
      const Instruction inst = decode_instruction(fn_.code, pc);
      print(inst);
      pc += inst.length;
    }
    os_ << "end\n";
  }

  void print_one(uint32_t pc) { print(decode_instruction(fn_.code, pc)); }

 private:
  const Signature callee(uint32_t function, std::string* name) const {
    const uint32_t index = function & ~kImportBit;
    if (function & kImportBit) {
      *name = index < def_.imports.size() ? def_.imports[index].full_name : "?import" + std::to_string(index);
      return index < def_.imports.size() ? parse_signature(def_.imports[index].signature) : Signature();
    }
    *name = index < def_.functions.size() ? def_.functions[index].name : "?function" + std::to_string(index);
    return index < def_.functions.size() ? parse_signature(def_.functions[index].signature) : Signature();
  }

  std::string list(const std::vector<ValueType>& types, const std::vector<uint16_t>& regs) const {
    std::string out;
    for (size_t k = 0; k < regs.size(); ++k) {
      if (k) out += ", ";
      out += reg_name(k < types.size() ? types[k] : ValueType::kI32, regs[k]);
    }
    return out;
  }

  std::string call(const Operand& op) const {
    std::string name;
    const Signature sig = callee(op.u32, &name);
    std::string out = "@" + name + "(" + list(sig.arg_types(), op.args) + ")";
    if (!op.results.empty()) out += " -> (" + list(sig.result_types(), op.results) + ")";
    return out;
  }

  std::string variadic_call(const Operand& op) const {
    std::string name;
    const Signature sig = callee(op.u32, &name);
    std::string out = "@" + name + "(";
    size_t next = 0;
    for (size_t k = 0; k < op.segments.size() && k < sig.args.size(); ++k) {
      if (k) out += ", ";
      const SignatureItem& item = sig.args[k];
      if (!item.variadic) {
        out += reg_name(item.type, op.args.at(next++));
        continue;
      }
      out += "[";
      for (uint16_t t = 0; t < op.segments[k] * item.tuple.size(); ++t) {
        if (t) out += ", ";
        out += reg_name(item.tuple[t % item.tuple.size()], op.args.at(next++));
      }
      out += "]";
    }
    out += ")";
    if (!op.results.empty()) out += " -> (" + list(sig.result_types(), op.results) + ")";
    return out;
  }

  std::string operand(const Operand& op) const {
    ValueType type;
    if (register_kind(op.kind, &type)) return reg_name(type, op.reg);
    switch (op.kind) {
      case 'n': return std::to_string(op.imm_i32);
      case 'N': return std::to_string(op.imm_i64);
      case 'x': return float_text(op.imm_f32, 9);
      case 'X': return float_text(op.imm_f64, 17);
      case 'L': return label_name(op.u32);
      case 's': return op.u32 < def_.rodata.size() ? quote_string(def_.rodata[op.u32]) : "?rodata";
      case 'g': return op.u32 < def_.globals.size() ? "@" + def_.globals[op.u32].name : "?global";
      case 'c': return call(op);
      case 'v': return variadic_call(op);
      case 'R': return list(parse_signature(fn_.signature).result_types(), op.args);
      case 't': {
        std::string out = "[";
        for (size_t k = 0; k < op.targets.size(); ++k) out += (k ? ", " : "") + label_name(op.targets[k]);
        return out + "]";
      }
      default: return "?";
    }
  }

  void print(const Instruction& inst) {
    if (inst.opcode == static_cast<uint8_t>(Op::Block)) {
      os_ << label_name(inst.offset) << ":\n";
      return;
    }
    os_ << "  " << inst.info->mnemonic;
    for (size_t k = 0; k < inst.operands.size(); ++k) {
      const std::string text = operand(inst.operands[k]);
      if (text.empty()) continue;
      os_ << (k ? ", " : " ") << text;
    }
    os_ << "\n";
  }

  const ModuleDef& def_;
  const FunctionDef& fn_;
  std::ostream& os_;
};

}  // namespace

std::string quote_string(const std::string& bytes) {
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string disassemble_instruction(const ModuleDef& def, uint32_t function, uint32_t pc) {
  GRAPHRT_CHECK_KIND(function < def.functions.size(), ErrorKind::kOutOfRange, "disassemble_instruction: function ordinal out of range");
  std::ostringstream os;
  FunctionPrinter(def, def.functions[function], os).print_one(pc);
  // The printer indents instructions and ends each line; one line is wanted.
  const std::string text = os.str();
  const size_t begin = text.find_first_not_of(' ');
  const size_t end = text.find_last_not_of('\n');
  return begin == std::string::npos || end < begin ? std::string() : text.substr(begin, end - begin + 1);
}

std::string disassemble(const ModuleDef& def) {
  std::ostringstream os;
  os << "module " << def.name << " version " << def.version << "\n";
  for (const Dependency& d : def.dependencies) {
    os << "dependency " << d.name << " " << d.min_version << (d.optional ? " optional" : "");
    if (!d.source.empty()) os << " from " << quote_string(d.source);
    os << "\n";
  }
  for (const ImportDecl& i : def.imports) {
    os << "import " << i.full_name << " " << quote_string(i.signature) << (i.optional ? " optional" : "") << "\n";
  }
  for (const std::string& r : def.rodata) os << "rodata " << quote_string(r) << "\n";
  static const char* const kTypes[kValueTypeCount] = {"i32", "i64", "f32", "f64", "ref"};
  for (const GlobalDef& g : def.globals) os << "global " << kTypes[static_cast<int>(g.type)] << " " << g.name << "\n";
  for (const FunctionDef& fn : def.functions) {
    os << "\n";
    FunctionPrinter(def, fn, os).run();
  }
  return os.str();
}

}  // namespace vm
}  // namespace graphrt
