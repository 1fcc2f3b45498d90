#include "backends/vm/bytecode/bytecode_program.h"

#include <cstring>

#include "graphrt/error.h"
#include "backends/vm/host/module_address.h"
#include "backends/vm/bytecode/module_loader.h"
#include "backends/vm/host/signature.h"
#include "backends/vm/host/tensor.h"
#include "backends/vm/host/tensor_module.h"

namespace graphrt {
namespace vm {
namespace {

bool tensor_only(const std::string& cconv) {
  const Signature sig = parse_signature(cconv);
  if (!sig.results.empty() || sig.is_variadic()) return false;
  for (ValueType t : sig.arg_types()) {
    if (t != ValueType::kRef) return false;
  }
  return true;
}

std::string resolve_source(const std::string& source, const std::string& base_dir) {
  const std::string path = parse_module_address(source).path;
  if (path[0] == '/') return source;
  if (base_dir.empty()) throw Error("a relative module source needs the model's directory");
  return base_dir + "/" + source;
}

std::shared_ptr<VmModule> load_dependency(const Dependency& dep, const std::string& base_dir, Instance& instance) {
  std::shared_ptr<VmModule> module =
      dep.source.empty() ? instance.create_module(dep.name) : load_module_file(resolve_source(dep.source, base_dir));
  if (module && module->name() != dep.name) {
    throw Error("the module loaded for dependency '" + dep.name + "' is named '" + module->name() + "'");
  }
  return module;
}

}  // namespace

void link_declared_dependencies(Context& context, const VmModule& module, const std::string& base_dir) {
  for (const Dependency& dep : module.dependencies()) {
    if (context.has_module(dep.name)) continue;
    try {
      // A missing one is reported when `module` registers (unless optional).
      if (auto loaded = load_dependency(dep, base_dir, *context.instance())) context.register_module(loaded);
    } catch (Error& e) {
      throw e.with("module", module.name()).with("dependency", dep.source.empty() ? dep.name : dep.source);
    }
  }
}

Program::Program(std::shared_ptr<BytecodeModule> module, ProgramOptions options)
    : module_(std::move(module)),
      context_(std::make_unique<Context>(options.instance ? options.instance : Instance::shared())) {
  if (options.instruction_budget != 0) context_->set_instruction_budget(options.instruction_budget);
  context_->register_module(create_tensor_module());
  context_->register_module(create_tvm_module(options.kernels));
  for (auto& extra : options.extra_modules) context_->register_module(extra);
  link_declared_dependencies(*context_, *module_, options.base_dir);
  context_->register_module(module_);
}

std::shared_ptr<Program> Program::load(const uint8_t* data, size_t size, ProgramOptions options) {
  return std::make_shared<Program>(BytecodeModule::load(data, size), std::move(options));
}

std::shared_ptr<Program> Program::load_payload(const uint8_t* data, size_t size, size_t* consumed,
                                               ProgramOptions options) {
  uint64_t length = 0;
  if (size < 8) throw Error("graphrt_vm payload truncated").with("offset", "0");
  std::memcpy(&length, data, 8);
  if (length > size - 8) throw Error("graphrt_vm payload length exceeds the blob").with("offset", "0");
  if (consumed) *consumed = 8 + static_cast<size_t>(length);
  return load(data + 8, static_cast<size_t>(length), std::move(options));
}

std::vector<uint8_t> Program::make_payload(const std::vector<uint8_t>& bytecode) {
  std::vector<uint8_t> out(8 + bytecode.size());
  const uint64_t length = bytecode.size();
  std::memcpy(out.data(), &length, 8);
  if (!bytecode.empty()) std::memcpy(out.data() + 8, bytecode.data(), bytecode.size());
  return out;
}

bool Program::has_function(const std::string& name) const { return module_->lookup_export(name) >= 0; }

std::vector<std::string> Program::tensor_functions() const {
  std::vector<std::string> names;
  for (const ExportDecl& e : module_->exports()) {
    if (tensor_only(e.signature)) names.push_back(e.name);
  }
  return names;
}

void Program::invoke(const std::string& name, const std::vector<DLTensor*>& tensors) {
  std::vector<Value> args;
  for (DLTensor* t : tensors) {
    GRAPHRT_CHECK(t != nullptr, "VM invoke: null tensor argument");
    args.push_back(Value::from_ref(std::make_shared<BorrowedTensor>(t)));
  }
  call(name, args);
}

std::vector<Value> Program::call(const std::string& name, const std::vector<Value>& args) {
  return context_->invoke(module_->name() + "." + name, args);
}

}  // namespace vm
}  // namespace graphrt
