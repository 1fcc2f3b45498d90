// libFuzzer target for the VM loader, verifier and interpreter.
//
// Bytes go through read_module_def + verify_module exactly as a .vmbc file
// would; a module that verifies is linked with the built-in tensor module and
// a stub for any other import, and every export whose arguments are all
// scalars is run with zero arguments. Every invocation, `__init` and
// `__deinit` included, runs under the lowered default instruction budget.
// Traps are fine; crashes, sanitizer reports and hangs are bugs. See README_vm.md.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "graphrt/error.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/host/context.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/host/native_module.h"
#include "backends/vm/host/signature.h"
#include "backends/vm/host/tensor_module.h"

namespace {

using namespace graphrt::vm;

// Any import not served by `tensor` resolves to a stub that returns zeros.
std::shared_ptr<NativeModule> stub_for(const BytecodeModule& module, const std::string& name) {
  auto stub = std::make_shared<NativeModule>(name, UINT32_MAX);
  for (const ImportDecl& decl : module.imports()) {
    const auto names = split_full_name(decl.full_name);
    if (names.first != name || stub->lookup_export(names.second) >= 0) continue;
    const std::vector<ValueType> results = parse_signature(decl.signature).result_types();
    stub->add_function(names.second, decl.signature, [results](NativeCall& c) {
      for (ValueType t : results) {
        Value v;
        v.type = t;
        c.ret(v);
      }
    });
  }
  return stub;
}

void run_exports(Context& context, const BytecodeModule& module) {
  for (const ExportDecl& e : module.exports()) {
    const Signature sig = parse_signature(e.signature);
    std::vector<Value> args;
    bool scalar_only = true;
    for (ValueType t : sig.arg_types()) {
      scalar_only = scalar_only && t != ValueType::kRef;
      Value v;
      v.type = t;
      args.push_back(v);
    }
    if (!scalar_only) continue;
    try {
      context.invoke(module.name() + "." + e.name, args);
    } catch (const graphrt::Error&) {
    }
  }
}

void fuzz_one(const uint8_t* data, size_t size) {
  std::shared_ptr<BytecodeModule> module;
  try {
    module = BytecodeModule::load(data, size);
  } catch (const graphrt::Error&) {
    return;  // rejected at load: the expected outcome for most inputs
  }
  try {
    Context context(Instance::create());
    context.register_module(create_tensor_module());
    for (const ImportDecl& decl : module->imports()) {
      const std::string name = split_full_name(decl.full_name).first;
      if (!context.has_module(name) && name != module->name()) context.register_module(stub_for(*module, name));
    }
    context.register_module(module);
    run_exports(context, *module);
  } catch (const graphrt::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool configured = [] {
    // Small caps keep each input fast and memory-bounded.
    limits().max_buffer_bytes = 1 << 16;
    limits().max_list_size = 1 << 12;
    limits().max_tensor_bytes = 1 << 16;
    limits().max_stack_depth = 64;
    limits().max_registers_per_bank = 256;
    // Contexts take their budget from here, so `__init` is bounded too.
    limits().instruction_budget = 2000;
    return true;
  }();
  (void)configured;
  fuzz_one(data, size);
  return 0;
}
