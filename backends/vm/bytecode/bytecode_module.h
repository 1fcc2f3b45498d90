// graphrt::vm::BytecodeModule — a verified ModuleDef that runs in the
// interpreter (interpreter.cc).
//
// The interpreter decodes without bounds checks, so an unverified module must
// never exist: the only ways to get one are create() and load(), which run
// the verifier first. The constructor needs a VerifiedDef, which only this
// class can make.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/vm/host/module.h"
#include "backends/vm/bytecode/module_def.h"
#include "backends/vm/host/signature.h"

namespace graphrt {
namespace vm {

// Per-function facts the interpreter needs on every call, computed once.
struct FunctionInfo {
  Signature signature;
  std::vector<ValueType> arg_types;
  std::vector<uint16_t> arg_slots;  // register each argument lands in (its bank)
  std::vector<ValueType> result_types;
};

// Per-context state of a bytecode module: its globals, one Value each, typed
// and zeroed (null for refs) until code stores to them.
class BytecodeState : public ModuleState {
 public:
  std::vector<Value> globals;
};

class BytecodeModule : public VmModule {
 public:
  // Verifies `def` (throws graphrt::Error on any rule violation).
  static std::shared_ptr<BytecodeModule> create(ModuleDef def);
  // read_module_def + create.
  static std::shared_ptr<BytecodeModule> load(const uint8_t* data, size_t size);

  const std::string& name() const override { return def_.name; }
  uint32_t version() const override { return def_.version; }
  const std::vector<Dependency>& dependencies() const override { return def_.dependencies; }
  const std::vector<ImportDecl>& imports() const override { return def_.imports; }
  const std::vector<ExportDecl>& exports() const override { return exports_; }
  std::unique_ptr<ModuleState> create_state() override;
  // `state` must come from this module's create_state() (the Context ensures it).
  void call(Stack& stack, ModuleState& state, uint32_t ordinal, const std::vector<Value>& args,
            std::vector<Value>* results) override;

  const ModuleDef& def() const { return def_; }
  const FunctionInfo& function_info(uint32_t ordinal) const { return infos_[ordinal]; }
  const Signature& import_signature(uint32_t ordinal) const { return import_sigs_[ordinal]; }
  const VmRef& rodata(uint32_t index) const { return rodata_[index]; }

  // Proof that verify_module() accepted the def; constructible by this class only.
  class VerifiedDef {
    friend class BytecodeModule;
    explicit VerifiedDef(ModuleDef def) : def(std::move(def)) {}
    ModuleDef def;
  };
  // Public for std::make_shared; callers cannot produce a VerifiedDef.
  explicit BytecodeModule(VerifiedDef verified);

 private:
  ModuleDef def_;
  std::vector<ExportDecl> exports_;
  std::vector<uint32_t> export_to_function_;
  std::vector<FunctionInfo> infos_;
  std::vector<Signature> import_sigs_;
  std::vector<VmRef> rodata_;  // read-only Buffers shared by const.ref.rodata
};

}  // namespace vm
}  // namespace graphrt
