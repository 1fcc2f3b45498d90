#include "vm_test_util.h"

#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/host/tensor_module.h"

namespace vm_test {

std::shared_ptr<graphrt::vm::BytecodeModule> build(const std::string& source) {
  return graphrt::vm::BytecodeModule::create(graphrt::vm::assemble(source));
}

Harness::Harness(const std::string& source, std::vector<std::shared_ptr<graphrt::vm::VmModule>> extra)
    : context(std::make_unique<graphrt::vm::Context>(graphrt::vm::Instance::create())) {
  context->register_module(graphrt::vm::create_tensor_module());
  for (auto& m : extra) context->register_module(m);
  auto module = build(source);
  module_name = module->name();
  context->register_module(module);
}

std::vector<Value> Harness::call(const std::string& function, const std::vector<Value>& args) {
  return context->invoke(module_name + "." + function, args);
}

}  // namespace vm_test
