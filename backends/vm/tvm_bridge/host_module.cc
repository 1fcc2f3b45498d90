#include "backends/vm/tvm_bridge/host_module.h"

#include "graphrt/error.h"
#include "src/layer_api/library_origin.h"
#include "backends/vm/bytecode/bytecode_disassembler.h"
#include "backends/vm/host/module_address.h"
#include "backends/vm/bytecode/module_loader.h"
#include "backends/vm/tvm_bridge/packed_call.h"
#include "backends/vm/bytecode/bytecode_program.h"
#include "backends/vm/host/tensor_module.h"
#include "backends/vm/host/tvm_module.h"

namespace graphrt {
namespace vm {

namespace {

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// "demo.add@1: add.i32 %i2, %i0, %i1"
std::string trace_line(const BytecodeModule& module, uint32_t function, uint32_t pc) {
  return module.name() + "." + module.def().functions[function].name + "@" + std::to_string(pc) + ": " +
         disassemble_instruction(module.def(), function, pc);
}

class VmProgramModuleNode : public VmHostModuleNode {
 public:
  VmProgramModuleNode(std::shared_ptr<BytecodeModule> module, std::vector<std::shared_ptr<VmModule>> extra,
                      std::string base_dir, bool link_now, std::shared_ptr<Instance> instance)
      : module_(std::move(module)),
        extra_(std::move(extra)),
        base_dir_(std::move(base_dir)),
        instance_(std::move(instance)) {
    if (link_now) link();
  }

  std::string type_key() const override { return "graphrt_vm"; }

  graphrt::PackedFunc find_function(const std::string& name, const graphrt::Module& self) override {
    if (module_->lookup_export(name) < 0) return graphrt::PackedFunc();
    program();  // link errors surface here, not at the first call
    return packed_function(full_name(name), name, self);
  }

  const VmModule& main_module() const override { return *module_; }

  void attach_environment(graphrt::ModuleNode* context) override {
    context_ = context;
    if (program_) return;
    const std::string origin = library_origin(context);
    if (!origin.empty() && origin[0] != '<') base_dir_ = directory_of(origin);
    link();
  }

  void interrupt() override {
    if (program_) program_->interrupt();
  }

 protected:
  Context& context() override { return program()->context(); }
  const std::shared_ptr<Instance>& instance() const override { return instance_; }

 private:
  const std::shared_ptr<Program>& program() {
    if (!program_) link();
    return program_;
  }

  void link() {
    ProgramOptions options;
    options.kernels = [this](const std::string& name) { return resolve_kernel(name); };
    options.extra_modules = extra_;
    options.base_dir = base_dir_;
    options.instance = instance_;
    LimitsScope scope(instance_->limits());
    program_ = std::make_shared<Program>(module_, std::move(options));
  }

  // Kernels are held without references: the context (the library module)
  // owns this module through its imports, so a reference back would be a
  // cycle. Generated kernels are called through their code address, which
  // stays mapped while the context lives; other functions are looked up per call.
  Kernel resolve_kernel(const std::string& name) {
    if (!context_) throw Error(ErrorKind::kFailedPrecondition,
                               "VM kernel call '" + name + "': the VM module is not part of a library's module tree");
    graphrt::PackedFunc f = context_->get_function(name, true);
    if (!f) return Kernel();
    if (TVMBackendPackedCFunc code = f->backend_c_func()) {
      return [code, name](const std::vector<DLTensor*>& tensors) {
        std::vector<TVMValue> values(tensors.size());
        std::vector<int> codes(tensors.size(), kTVMDLTensorHandle);
        for (size_t i = 0; i < tensors.size(); ++i) values[i].v_handle = tensors[i];
        TVMValue ret;
        int ret_code = kTVMNullptr;
        if (code(values.data(), codes.data(), static_cast<int>(values.size()), &ret, &ret_code, nullptr) != 0)
          throw last_error_as_exception().with("symbol", name);
      };
    }
    graphrt::ModuleNode* context = context_;
    return [context, name](const std::vector<DLTensor*>& tensors) {
      ArgList args;
      for (DLTensor* t : tensors) args.add_tensor(t);
      graphrt::call_function(context->require_function(name), args);
    };
  }

  std::shared_ptr<BytecodeModule> module_;
  std::vector<std::shared_ptr<VmModule>> extra_;
  std::string base_dir_;
  std::shared_ptr<Instance> instance_;
  std::shared_ptr<Program> program_;
  graphrt::ModuleNode* context_ = nullptr;
};

class VmContextModuleNode : public VmHostModuleNode {
 public:
  VmContextModuleNode(const std::vector<std::string>& specs, std::shared_ptr<Instance> instance)
      : context_(std::make_unique<Context>(std::move(instance))) {
    if (specs.empty()) throw Error("graphrt.vm.link(module, ...): no module given");
    LimitsScope scope(context_->instance()->limits());
    context_->register_module(create_tensor_module());
    context_->register_module(create_tvm_module(KernelResolver()));
    for (const std::string& spec : specs) {
      std::shared_ptr<VmModule> module = load_module_file(spec);
      link_declared_dependencies(*context_, *module, directory_of(parse_module_address(spec).path));
      context_->register_module(module);
      last_ = std::move(module);
    }
  }

  std::string type_key() const override { return "graphrt_vm_context"; }

  graphrt::PackedFunc find_function(const std::string& name, const graphrt::Module& self) override {
    const std::string full = full_name(name);
    const auto names = split_full_name(full);
    const VmModule* module = context_->find_module(names.first);
    if (!module || module->lookup_export(names.second) < 0) return graphrt::PackedFunc();
    return packed_function(full, full, self);
  }

  const VmModule& main_module() const override { return *last_; }
  void interrupt() override { context_->interrupt(); }

 protected:
  Context& context() override { return *context_; }
  const std::shared_ptr<Instance>& instance() const override { return context_->instance(); }

 private:
  std::unique_ptr<Context> context_;
  std::shared_ptr<VmModule> last_;
};

}  // namespace

std::string VmHostModuleNode::full_name(const std::string& name) const {
  return name.find('.') == std::string::npos ? main_module().name() + "." + name : name;
}

const ExportDecl& VmHostModuleNode::find_export(const std::string& name) {
  const std::string full = full_name(name);
  const auto names = split_full_name(full);
  const VmModule* module = context().find_module(names.first);
  const int ordinal = module ? module->lookup_export(names.second) : -1;
  if (ordinal < 0) throw Error(ErrorKind::kNotFound, "VM function not found").with("function", full);
  return module->exports()[static_cast<size_t>(ordinal)];
}

void VmHostModuleNode::set_tracer(PackedFunc tracer) {
  std::lock_guard<std::mutex> lock(tracer_mutex_);
  tracer_ = std::move(tracer);
}

std::vector<std::string> VmHostModuleNode::function_names() const {
  std::vector<std::string> names;
  for (const ExportDecl& e : main_module().exports()) {
    if (e.name != "__init" && e.name != "__deinit") names.push_back(e.name);
  }
  return names;
}

PackedFunc VmHostModuleNode::packed_function(const std::string& full_name, const std::string& display_name,
                                             const Module& self) {
  const std::string signature = find_export(full_name).signature;
  VmHostModuleNode* node = this;
  graphrt::Module keep = self;
  return make_packed_call(display_name, signature, [node, keep, full_name](const std::vector<Value>& args) {
    return node->call(full_name, args);
  }, instance()->limits());
}

std::vector<Value> VmHostModuleNode::call(const std::string& full_name, const std::vector<Value>& args) {
  Context& linked = context();
  PackedFunc tracer;
  {
    std::lock_guard<std::mutex> lock(tracer_mutex_);
    tracer = tracer_;
  }
  if (!tracer) return linked.invoke(full_name, args);
  const Tracer report = [&tracer](const BytecodeModule& module, uint32_t function, uint32_t pc) {
    ArgList line;
    line.add_string(trace_line(module, function, pc));
    call_function(tracer, line);
  };
  Stack stack;
  stack.set_budget(linked.instruction_budget());
  stack.set_tracer(&report);
  return linked.invoke(full_name, args, stack);
}

graphrt::Module make_program_module(std::shared_ptr<BytecodeModule> program,
                                    std::vector<std::shared_ptr<VmModule>> extra, std::string base_dir,
                                    bool link_now, std::shared_ptr<Instance> instance) {
  return graphrt::Module(make_ref<VmProgramModuleNode>(std::move(program), std::move(extra), std::move(base_dir),
                                                       link_now, std::move(instance)));
}

graphrt::Module make_context_module(const std::vector<std::string>& specs, std::shared_ptr<Instance> instance) {
  return graphrt::Module(make_ref<VmContextModuleNode>(specs, std::move(instance)));
}

void interrupt_tree(graphrt::ModuleNode* root) {
  if (auto* vm = dynamic_cast<VmHostModuleNode*>(root)) vm->interrupt();
  for (graphrt::ModuleNode* m : imported_modules(*root))
    if (auto* vm = dynamic_cast<VmHostModuleNode*>(m)) vm->interrupt();
}

}  // namespace vm
}  // namespace graphrt
