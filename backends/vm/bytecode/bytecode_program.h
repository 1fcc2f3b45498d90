// graphrt::vm::Program — what the rest of graphrt uses: one bytecode module
// linked into its own context together with the built-in native modules.
//
// Two ways in: a .vmbc file's bytes (binary_format.h) or the payload that a
// TVM .so blob carries under tkey `graphrt_vm`:
//
//   loadbinary payload (tkey "graphrt_vm") := STR bytecode
//   STR = u64 little-endian length + bytes (dmlc string), bytecode = a .vmbc image
//
// Graph nodes call exported functions whose signature is all tensor refs
// ("0rrr" or "0rrr_v"): inputs then outputs, exactly the DLTensor* arguments
// the graph executor passes to a kernel.
//
// Linking order: `tensor`, `tvm`, options.extra_modules, then every
// dependency of the program that is still missing, in declaration order —
// loaded from its `source` ("lib.so@create?k=v", a relative path taken from
// options.base_dir, the model's directory) or, without a source, made by the
// instance's module factory of that name — then the program itself.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/host/context.h"
#include "backends/vm/host/tvm_module.h"

namespace graphrt {
namespace vm {

struct ProgramOptions {
  // Resolves tvm.call kernel names; may be empty when the program has none.
  KernelResolver kernels;
  // Extra modules (native, dynamic or bytecode) registered before the program,
  // in order, after the built-in `tensor` and `tvm` modules.
  std::vector<std::shared_ptr<VmModule>> extra_modules;
  // Branches + calls per invocation, `__init` included; 0 takes the
  // instance's instruction_budget (GRAPHRT_VM_BUDGET).
  uint64_t instruction_budget = 0;
  // Directory that relative dependency sources are relative to; empty
  // refuses relative sources.
  std::string base_dir;
  // Native module factories for dependencies without a source, and the
  // limits the program runs under; default Instance::shared().
  std::shared_ptr<Instance> instance;
};

// Registers the dependencies of `module` that `context` lacks, as above.
void link_declared_dependencies(Context& context, const VmModule& module, const std::string& base_dir);

class Program {
 public:
  // Parses, verifies and links a .vmbc image (throws graphrt::Error).
  static std::shared_ptr<Program> load(const uint8_t* data, size_t size, ProgramOptions options = {});
  // Parses the `graphrt_vm` loadbinary payload (STR bytecode); *consumed gets
  // the number of payload bytes read.
  static std::shared_ptr<Program> load_payload(const uint8_t* data, size_t size, size_t* consumed,
                                               ProgramOptions options = {});
  // The payload for a .vmbc image (what a packer writes under tkey graphrt_vm).
  static std::vector<uint8_t> make_payload(const std::vector<uint8_t>& bytecode);

  const BytecodeModule& module() const { return *module_; }
  Context& context() { return *context_; }
  bool has_function(const std::string& name) const;
  // Names of exported functions callable with tensors only.
  std::vector<std::string> tensor_functions() const;

  // Invokes export `name` (local name) with one tensor ref per DLTensor*;
  // the tensors are borrowed for the call's duration.
  void invoke(const std::string& name, const std::vector<DLTensor*>& tensors);
  // General host call by local name.
  std::vector<Value> call(const std::string& name, const std::vector<Value>& args);
  // Thread-safe: stops the invocations running now with "VM invocation interrupted".
  void interrupt() { context_->interrupt(); }

  Program(std::shared_ptr<BytecodeModule> module, ProgramOptions options);  // use load()

 private:
  std::shared_ptr<BytecodeModule> module_;
  std::unique_ptr<Context> context_;
};

}  // namespace vm
}  // namespace graphrt
