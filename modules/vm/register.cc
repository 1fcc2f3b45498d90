// The VM back end's registration: the `graphrt_vm` blob record becomes a
// module whose exported tensor functions graph nodes can call, and whose
// `tvm.call` reaches the kernels of the library it was packed with.
#include "modules/vm/register.h"

#include "graphrt/binary_loader.h"
#include "graphrt/module.h"
#include "graphrt/registry.h"
#include "modules/vm/limits.h"
#include "modules/vm/packed_call.h"
#include "modules/vm/program.h"

namespace graphrt {
namespace vm {

namespace {

class VmModuleNode : public graphrt::ModuleNode {
 public:
  explicit VmModuleNode(std::string bytecode) : bytecode_(std::move(bytecode)) {
    ProgramOptions options;
    options.kernels = [this](const std::string& name) { return resolve_kernel(name); };
    program_ = Program::load(reinterpret_cast<const uint8_t*>(bytecode_.data()), bytecode_.size(), options);
  }

  std::string type_key() const override { return "graphrt_vm"; }

  graphrt::PackedFunc find_function(const std::string& name, const graphrt::Module& self) override {
    if (!program_->has_function(name)) return graphrt::PackedFunc();
    return make_packed_export(program_, name, self);
  }

  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (const ExportDecl& e : program_->module().exports()) {
      if (e.name != "__init" && e.name != "__deinit") names.push_back(e.name);
    }
    return names;
  }

  void interrupt() { program_->interrupt(); }

  void attach_environment(graphrt::ModuleNode* context) override { context_ = context; }

 private:
  // Kernels are held without references: the context (the library module)
  // owns this module through its imports, so a reference back would be a
  // cycle. Generated kernels are called through their code address, which
  // stays mapped while the context lives; other functions are looked up per call.
  Kernel resolve_kernel(const std::string& name) {
    if (!context_) throw Error("VM kernel call '" + name + "': the VM module is not part of a library's module tree");
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
          throw Error(last_error()).with("symbol", name);
      };
    }
    graphrt::ModuleNode* context = context_;
    return [context, name](const std::vector<DLTensor*>& tensors) {
      ArgList args;
      for (DLTensor* t : tensors) args.add_tensor(t);
      call_function(context->require_function(name), args);
    };
  }

  std::string bytecode_;
  std::shared_ptr<Program> program_;
  graphrt::ModuleNode* context_ = nullptr;
};

// Interrupts every VM module in the tree under `root` (imports included).
void interrupt_tree(graphrt::ModuleNode* root) {
  if (auto* vm = dynamic_cast<VmModuleNode*>(root)) vm->interrupt();
  for (const graphrt::Module& m : root->imports()) interrupt_tree(m.get());
}

}  // namespace

void register_module() {
  // graphrt.vm.interrupt(module): thread-safe; stops the VM calls running
  // now in `module`'s tree (a library whose graph nodes call VM functions,
  // or the VM module itself) with "VM invocation interrupted".
  registry_set("graphrt.vm.interrupt", make_function([](const TVMArgs& args, RetValue*) {
    interrupt_tree(args.as_module(0).get());
  }, "graphrt.vm.interrupt"));
  // graphrt.vm.set_instruction_budget(n): budget (branches + calls per call)
  // of VM modules loaded afterwards; the default comes from GRAPHRT_VM_BUDGET.
  registry_set("graphrt.vm.set_instruction_budget", make_function([](const TVMArgs& args, RetValue*) {
    const int64_t n = args.as_int(0);
    if (n <= 0) throw Error("graphrt.vm.set_instruction_budget: the budget must be positive");
    limits().instruction_budget = static_cast<uint64_t>(n);
  }, "graphrt.vm.set_instruction_budget"));
  register_binary_loader("graphrt_vm", [](BlobReader& reader) {
    std::string bytecode = reader.read_string("graphrt_vm bytecode");
    return graphrt::Module(make_ref<VmModuleNode>(std::move(bytecode)));
  });
}

}  // namespace vm
}  // namespace graphrt
