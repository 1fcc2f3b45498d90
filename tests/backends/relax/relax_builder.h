// Small Relax executables made one instruction at a time with the executable
// writer, loaded through the registered loader: the builtin and hostile-code
// tests' programs.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/binary_loader.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "backends/relax/executable_writer.h"
#include "backends/relax/linked_executable.h"
#include "backends/relax/verifier.h"
#include "backends/relax/vm_module.h"

namespace graphrt_test {

using namespace graphrt::relax;

// Builds an executable one instruction at a time.
class Builder {
 public:
  int64_t function(const std::string& name, FunctionKind kind = FunctionKind::kPackedFunc) {
    FunctionInfo f;
    f.kind = kind;
    f.name = name;
    f.num_args = kind == FunctionKind::kVMFunc ? 0 : -2;
    exe_.functions.push_back(f);
    return static_cast<int64_t>(exe_.functions.size() - 1);
  }
  void begin(int64_t f, std::vector<std::string> params, int64_t registers) {
    FunctionInfo& info = exe_.functions[static_cast<size_t>(f)];
    info.start_instr = static_cast<int64_t>(exe_.instr_offset.size());
    info.num_args = static_cast<int64_t>(params.size());
    info.param_names = std::move(params);
    info.register_file_size = registers;
    current_ = f;
  }
  void call(int64_t dst, int64_t callee, std::vector<int64_t> args) {
    emit({1, dst, callee, static_cast<int64_t>(args.size())});
    for (int64_t a : args) exe_.instr_data.push_back(a);
  }
  void ret(int64_t reg) {
    emit({2, reg});
    exe_.functions[static_cast<size_t>(current_)].end_instr = static_cast<int64_t>(exe_.instr_offset.size());
  }
  void if_(int64_t cond, int64_t false_offset) { emit({4, cond, false_offset}); }
  void goto_(int64_t offset) { emit({3, offset}); }
  int64_t constant(Value v) {
    exe_.constants.push_back(std::move(v));
    return make_arg(ArgKind::kConstIdx, static_cast<int64_t>(exe_.constants.size() - 1));
  }
  // The VM module over the executable, loaded as a relax.VMExecutable record.
  graphrt::Module vm() {
    exe_.version = kExecutableVersion;
    const std::string payload = write_executable_record(exe_);
    graphrt::BlobReader reader(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
    graphrt::Module m = graphrt::load_binary("relax.VMExecutable", reader);
    return graphrt::call_function(m->require_function("vm_load_executable"), graphrt::ArgList()).as_module();
  }
  // The executable verified and linked with the builtins and graphrt's registry, for a
  // VirtualMachine of the test's own making.
  std::shared_ptr<const LinkedExecutable> linked() {
    exe_.version = kExecutableVersion;
    auto exe = std::make_shared<Executable>(exe_);
    verify_executable(*exe);
    return link_executable(exe, [](const std::string& name) { return graphrt::registry_get(name); });
  }

 private:
  void emit(std::initializer_list<int64_t> words) {
    exe_.instr_offset.push_back(static_cast<int64_t>(exe_.instr_data.size()));
    exe_.instr_data.insert(exe_.instr_data.end(), words);
  }
  Executable exe_;
  int64_t current_ = 0;
};

inline int64_t reg(int64_t r) { return make_arg(ArgKind::kRegister, r); }
inline int64_t imm(int64_t v) { return make_arg(ArgKind::kImmediate, v); }
inline int64_t fn(int64_t f) { return make_arg(ArgKind::kFuncIdx, f); }
const int64_t kVm = make_arg(ArgKind::kRegister, kVMRegister);

inline Value run(graphrt::Module vm, std::vector<Value> args) {
  return dynamic_cast<VmModuleNode&>(*vm.get()).invoke("main", args);
}

}  // namespace graphrt_test
