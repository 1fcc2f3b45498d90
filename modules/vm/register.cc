// The VM back end's registration: the `graphrt_vm` blob record becomes a
// module whose exported tensor functions graph nodes can call, and whose
// `tvm.call` reaches the kernels of the library it was packed with.
#include "modules/vm/register.h"

#include "graphrt/binary_loader.h"
#include "graphrt/module.h"
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
    graphrt::Module keep = self;
    Program* program = program_.get();
    return graphrt::make_function([keep, program, name](const TVMArgs& args, RetValue*) {
      std::vector<DLTensor*> tensors;
      for (int i = 0; i < args.size(); ++i) tensors.push_back(args.as_tensor(i));
      program->invoke(name, tensors);
    }, name);
  }

  std::vector<std::string> function_names() const override { return program_->tensor_functions(); }

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

}  // namespace

void register_module() {
  register_binary_loader("graphrt_vm", [](BlobReader& reader) {
    std::string bytecode = reader.read_string("graphrt_vm bytecode");
    return graphrt::Module(make_ref<VmModuleNode>(std::move(bytecode)));
  });
}

}  // namespace vm
}  // namespace graphrt
