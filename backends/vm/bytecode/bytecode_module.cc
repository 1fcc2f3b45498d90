#include "backends/vm/bytecode/bytecode_module.h"

#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/host/buffer.h"
#include "backends/vm/bytecode/bytecode_interpreter.h"
#include "backends/vm/bytecode/bytecode_verifier.h"

namespace graphrt {
namespace vm {
namespace {

FunctionInfo make_info(const FunctionDef& fn) {
  FunctionInfo info;
  info.signature = parse_signature(fn.signature);
  info.arg_types = info.signature.arg_types();
  info.result_types = info.signature.result_types();
  uint16_t next[kValueTypeCount] = {};
  for (ValueType t : info.arg_types) info.arg_slots.push_back(next[static_cast<int>(t)]++);
  return info;
}

}  // namespace

std::shared_ptr<BytecodeModule> BytecodeModule::create(ModuleDef def) {
  verify_module(def);
  return std::make_shared<BytecodeModule>(VerifiedDef(std::move(def)));
}

std::shared_ptr<BytecodeModule> BytecodeModule::load(const uint8_t* data, size_t size) {
  return create(read_module_def(data, size));
}

BytecodeModule::BytecodeModule(VerifiedDef verified) : def_(std::move(verified.def)) {
  for (uint32_t i = 0; i < def_.functions.size(); ++i) {
    const FunctionDef& fn = def_.functions[i];
    infos_.push_back(make_info(fn));
    if (!fn.exported) continue;
    exports_.push_back(ExportDecl{fn.name, fn.signature});
    export_to_function_.push_back(i);
  }
  for (const ImportDecl& decl : def_.imports) import_sigs_.push_back(parse_signature(decl.signature));
  for (const std::string& s : def_.rodata) {
    rodata_.push_back(std::make_shared<Buffer>(std::vector<uint8_t>(s.begin(), s.end()), /*read_only=*/true));
  }
}

std::unique_ptr<ModuleState> BytecodeModule::create_state() {
  auto state = std::make_unique<BytecodeState>();
  for (const GlobalDef& g : def_.globals) {
    Value v;
    v.type = g.type;
    state->globals.push_back(v);
  }
  return state;
}

void BytecodeModule::call(Stack& stack, ModuleState& state, uint32_t ordinal, const std::vector<Value>& args,
                          std::vector<Value>* results) {
  interpret(stack, *this, state, export_to_function_.at(ordinal), args, results);
}

}  // namespace vm
}  // namespace graphrt
