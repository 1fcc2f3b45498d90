#include "backends/vm/bytecode/bytecode_verifier.h"

#include <set>
#include <string>

#include "graphrt/error.h"
#include "backends/vm/host/context.h"
#include "backends/vm/bytecode/decoder.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/host/signature.h"

namespace graphrt {
namespace vm {
namespace {

class FunctionVerifier {
 public:
  FunctionVerifier(const ModuleDef& module, const FunctionDef& fn) : module_(module), fn_(fn) {}

  void run() {
    check_header();
    bool in_block = false;
    uint32_t pc = 0;
    while (pc < fn_.code.size()) {
      pc_ = pc;
      const Instruction inst = decode_instruction(fn_.code, pc);
      check_block_structure(inst, &in_block);
      for (const Operand& op : inst.operands) check_operand(op, inst);
      pc += inst.length;
    }
    pc_ = static_cast<uint32_t>(fn_.code.size());
    if (in_block) fail("function missing terminator in the last block");
    for (const BranchTarget& t : targets_) {
      // Reported at the branch itself: that is the instruction to fix.
      pc_ = t.branch_offset;
      if (!block_starts_.count(t.target)) fail("branch target " + std::to_string(t.target) + " is not a block start");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw Error(why).with("offset", std::to_string(pc_)); }

  void check_header() {
    if (fn_.name.empty() || fn_.name.find('.') != std::string::npos) fail("invalid function name");
    sig_ = parse_signature(fn_.signature);
    if (sig_.is_variadic()) fail("bytecode functions cannot be variadic");
    int per_bank[kValueTypeCount] = {};
    for (ValueType t : sig_.arg_types()) ++per_bank[static_cast<int>(t)];
    for (int b = 0; b < kValueTypeCount; ++b) {
      if (fn_.registers[b] > limits().max_registers_per_bank) fail("too many registers");
      if (per_bank[b] > fn_.registers[b]) fail("arguments do not fit the register banks");
    }
    if (fn_.code.empty()) fail("empty function body");
  }

  void check_block_structure(const Instruction& inst, bool* in_block) {
    if (inst.opcode == static_cast<uint8_t>(Op::Block)) {
      if (*in_block) fail("block marker inside a block (previous block lacks a terminator)");
      block_starts_.insert(inst.offset);
      *in_block = true;
      return;
    }
    if (!*in_block) fail("instruction outside a block (expected a block marker)");
    if (inst.info->terminator) *in_block = false;
  }

  void check_register(ValueType type, uint16_t reg) const {
    const uint16_t count = fn_.registers[static_cast<int>(type)];
    if (reg >= count) {
      fail(std::string("register %") + value_type_letter(type) + std::to_string(reg) + " out of range (function has " +
           std::to_string(count) + " " + value_type_name(type) + " registers)");
    }
  }

  void check_list(const std::vector<ValueType>& types, const std::vector<uint16_t>& regs, const char* what) const {
    if (types.size() != regs.size()) {
      fail(std::string(what) + " count " + std::to_string(regs.size()) + " does not match the signature (" +
           std::to_string(types.size()) + ")");
    }
    for (size_t i = 0; i < regs.size(); ++i) check_register(types[i], regs[i]);
  }

  Signature callee_signature(uint32_t function, bool* is_import) const {
    *is_import = (function & kImportBit) != 0;
    const uint32_t index = function & ~kImportBit;
    if (*is_import) {
      if (index >= module_.imports.size()) fail("import ordinal " + std::to_string(index) + " out of range");
      return parse_signature(module_.imports[index].signature);
    }
    if (index >= module_.functions.size()) fail("function ordinal " + std::to_string(index) + " out of range");
    return parse_signature(module_.functions[index].signature);
  }

  void check_call(const Operand& op) const {
    bool is_import = false;
    const Signature callee = callee_signature(op.u32, &is_import);
    if (callee.is_variadic()) fail("variadic callee needs call.variadic");
    check_list(callee.arg_types(), op.args, "call argument");
    check_list(callee.result_types(), op.results, "call result");
  }

  void check_variadic_call(const Operand& op) const {
    bool is_import = false;
    const Signature callee = callee_signature(op.u32, &is_import);
    if (!is_import) fail("call.variadic to an internal function");
    if (op.segments.size() != callee.args.size()) fail("call.variadic segment count does not match the signature");
    std::vector<ValueType> expected;
    for (size_t i = 0; i < callee.args.size(); ++i) {
      const SignatureItem& item = callee.args[i];
      if (!item.variadic) {
        if (op.segments[i] != 1) fail("call.variadic scalar segment must have size 1");
        expected.push_back(item.type);
        continue;
      }
      for (uint16_t k = 0; k < op.segments[i]; ++k) expected.insert(expected.end(), item.tuple.begin(), item.tuple.end());
    }
    check_list(expected, op.args, "call argument");
    check_list(callee.result_types(), op.results, "call result");
  }

  // A global operand must name a global of the bank the op's register uses.
  void check_global(const Operand& op, const Instruction& inst) const {
    if (op.u32 >= module_.globals.size()) fail("global ordinal " + std::to_string(op.u32) + " out of range");
    ValueType type = ValueType::kI32;
    for (const char* k = inst.info->operands; *k; ++k) {
      if (register_kind(*k, &type)) break;
    }
    const GlobalDef& global = module_.globals[op.u32];
    if (global.type != type) {
      fail(std::string(inst.info->mnemonic) + " on global '" + global.name + "' of type " +
           value_type_name(global.type));
    }
  }

  void check_operand(const Operand& op, const Instruction& inst) {
    ValueType type;
    if (register_kind(op.kind, &type)) return check_register(type, op.reg);
    switch (op.kind) {
      case 'L': targets_.push_back(BranchTarget{op.u32, pc_}); break;
      case 't':
        for (uint32_t target : op.targets) targets_.push_back(BranchTarget{target, pc_});
        break;
      case 's':
        if (op.u32 >= module_.rodata.size()) fail("rodata index " + std::to_string(op.u32) + " out of range");
        break;
      case 'g': check_global(op, inst); break;
      case 'c': check_call(op); break;
      case 'v': check_variadic_call(op); break;
      case 'R': check_list(sig_.result_types(), op.args, "return value"); break;
      default: break;  // immediates need no checks
    }
  }

  const ModuleDef& module_;
  const FunctionDef& fn_;
  Signature sig_;
  uint32_t pc_ = 0;
  std::set<uint32_t> block_starts_;
  struct BranchTarget {
    uint32_t target;
    uint32_t branch_offset;
  };
  std::vector<BranchTarget> targets_;
};

void verify_module_header(const ModuleDef& def) {
  if (def.name.empty() || def.name.find('.') != std::string::npos) throw Error("invalid module name");
  for (const Dependency& d : def.dependencies) {
    if (d.name.empty()) throw Error("dependency without a name");
  }
  for (const ImportDecl& i : def.imports) {
    try {
      split_full_name(i.full_name);
      parse_signature(i.signature);
    } catch (Error& e) {
      throw e.with("import", i.full_name);
    }
  }
  std::set<std::string> names;
  for (const FunctionDef& f : def.functions) {
    if (!names.insert(f.name).second) throw Error("duplicate function name").with("function", f.name);
  }
  std::set<std::string> globals;
  for (const GlobalDef& g : def.globals) {
    if (g.name.empty() || g.name.find('.') != std::string::npos) throw Error("invalid global name").with("global", g.name);
    if (!globals.insert(g.name).second) throw Error("duplicate global name").with("global", g.name);
    if (static_cast<int>(g.type) >= kValueTypeCount) throw Error("invalid global type").with("global", g.name);
  }
}

}  // namespace

void verify_module(const ModuleDef& def) {
  try {
    verify_module_header(def);
    for (const FunctionDef& fn : def.functions) {
      try {
        FunctionVerifier(def, fn).run();
      } catch (Error& e) {
        throw e.with("function", fn.name);
      }
    }
  } catch (Error& e) {
    throw e.with("module", def.name);
  }
}

}  // namespace vm
}  // namespace graphrt
