// The VM back end's registration: the `graphrt_vm` blob record becomes a
// module whose exported functions graph nodes (and C / Python callers) can
// call, and whose `tvm.call` reaches the kernels of the library it was packed
// with; plus the global functions graphrt.vm.load / .interrupt /
// .set_instruction_budget and the list functions (packed_call.h), which make
// the VM usable through the C API without its C++ headers.
#include "modules/vm/register.h"

#include "graphrt/binary_loader.h"
#include "graphrt/module.h"
#include "graphrt/registry.h"
#include "src/layer_api/library_origin.h"
#include "modules/vm/limits.h"
#include "modules/vm/module_loader.h"
#include "modules/vm/packed_call.h"
#include "modules/vm/program.h"

namespace graphrt {
namespace vm {

namespace {

class VmProgramModuleNode : public graphrt::ModuleNode {
 public:
  // `module` is linked after `extra` and the dependencies it declares; now
  // when `link_now`, else when the module joins a library's tree (whose
  // directory relative dependency sources are taken from) or is first used.
  VmProgramModuleNode(std::shared_ptr<BytecodeModule> module, std::vector<std::shared_ptr<VmModule>> extra,
               std::string base_dir, bool link_now)
      : module_(std::move(module)), extra_(std::move(extra)), base_dir_(std::move(base_dir)) {
    if (link_now) link();
  }

  std::string type_key() const override { return "graphrt_vm"; }

  graphrt::PackedFunc find_function(const std::string& name, const graphrt::Module& self) override {
    if (module_->lookup_export(name) < 0) return graphrt::PackedFunc();
    return make_packed_export(program(), name, self);
  }

  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (const ExportDecl& e : module_->exports()) {
      if (e.name != "__init" && e.name != "__deinit") names.push_back(e.name);
    }
    return names;
  }

  void attach_environment(graphrt::ModuleNode* context) override {
    context_ = context;
    if (program_) return;
    const std::string origin = library_origin(context);
    const size_t slash = origin.rfind('/');
    if (!origin.empty() && origin[0] != '<') base_dir_ = slash == std::string::npos ? "." : origin.substr(0, slash);
    link();
  }

  void interrupt() {
    if (program_) program_->interrupt();
  }

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
    program_ = std::make_shared<Program>(module_, std::move(options));
  }

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
      graphrt::call_function(context->require_function(name), args);
    };
  }

  std::shared_ptr<BytecodeModule> module_;
  std::vector<std::shared_ptr<VmModule>> extra_;
  std::string base_dir_;
  std::shared_ptr<Program> program_;
  graphrt::ModuleNode* context_ = nullptr;
};

// Interrupts every VM module in the tree under `root` (imports included).
void interrupt_tree(graphrt::ModuleNode* root) {
  if (auto* vm = dynamic_cast<VmProgramModuleNode*>(root)) vm->interrupt();
  for (const graphrt::Module& m : root->imports()) interrupt_tree(m.get());
}

}  // namespace

void register_backend(Runtime& runtime) {
  register_list_functions(runtime);
  // graphrt.vm.interrupt(module): thread-safe; stops the VM calls running
  // now in `module`'s tree (a library whose graph nodes call VM functions,
  // or the VM module itself) with "VM invocation interrupted".
  runtime.set_function("graphrt.vm.interrupt", make_function([](const TVMArgs& args, RetValue*) {
    interrupt_tree(args.as_module(0).get());
  }, "graphrt.vm.interrupt"));
  // graphrt.vm.set_instruction_budget(n): budget (branches + calls per call)
  // of VM modules loaded afterwards; the default comes from GRAPHRT_VM_BUDGET.
  runtime.set_function("graphrt.vm.set_instruction_budget", make_function([](const TVMArgs& args, RetValue*) {
    const int64_t n = args.as_int(0);
    if (n <= 0) throw Error("graphrt.vm.set_instruction_budget: the budget must be positive");
    limits().instruction_budget = static_cast<uint64_t>(n);
  }, "graphrt.vm.set_instruction_budget"));
  // The record: verified now, linked when it joins the library's tree.
  runtime.register_binary_loader("graphrt_vm", [](BlobReader& reader) {
    const std::string bytecode = reader.read_string("graphrt_vm bytecode");
    auto module = BytecodeModule::load(reinterpret_cast<const uint8_t*>(bytecode.data()), bytecode.size());
    return graphrt::Module(make_ref<VmProgramModuleNode>(std::move(module), std::vector<std::shared_ptr<VmModule>>(), "",
                                                  /*link_now=*/false));
  });
  // graphrt.vm.load(path, [module, ...]): a .vmbc / .vmasm file as a module
  // whose exports take and return scalars and tensors (packed_call.h); the
  // optional further arguments (lib.so@create?k=v, .vmbc, .vmasm) are linked
  // first, in order.
  runtime.set_function("graphrt.vm.load", make_function([](const TVMArgs& args, RetValue* ret) {
    if (args.size() < 1) throw Error("graphrt.vm.load(path, [module, ...]): path missing");
    const std::string path = args.as_string(0);
    std::vector<std::shared_ptr<VmModule>> extra;
    for (int i = 1; i < args.size(); ++i) extra.push_back(load_module_file(args.as_string(i)));
    const size_t slash = path.rfind('/');
    ret->set_module(graphrt::Module(make_ref<VmProgramModuleNode>(load_bytecode_file(path), std::move(extra),
                                                           slash == std::string::npos ? "." : path.substr(0, slash),
                                                           /*link_now=*/true)));
  }, "graphrt.vm.load"));
}

}  // namespace vm
}  // namespace graphrt
