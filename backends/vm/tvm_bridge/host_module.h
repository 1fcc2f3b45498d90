// VM code as a graphrt module, for hosts: the module of a `graphrt_vm` blob
// record or of graphrt.vm.load (one program linked after the built-ins), and
// the module of graphrt.vm.link (a context of several modules of any kind).
// Their functions are packed calls converted by signature (packed_call.h);
// the graphrt.vm.* functions that inspect or steer VM code (module_name,
// signature, argument_types, result_types, set_tracer, interrupt) take either.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/module.h"
#include "graphrt/packed_func.h"
#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/host/context.h"
#include "backends/vm/host/module.h"

namespace graphrt {
namespace vm {

class VmHostModuleNode : public graphrt::ModuleNode {
 public:
  // The module that plain function names belong to: the program, or the
  // module linked last.
  virtual const VmModule& main_module() const = 0;
  // Thread-safe: stops the calls running in this module now with "VM
  // invocation interrupted".
  virtual void interrupt() = 0;

  // "module.function" for `name`; a name without a dot is main_module()'s.
  std::string full_name(const std::string& name) const;
  // The export `name` (plain or full) refers to; throws "VM function not
  // found" naming it.
  const ExportDecl& find_export(const std::string& name);
  // Later calls report every executed bytecode instruction to `tracer`, one
  // string argument per instruction ("demo.add@1: add.i32 %i2, %i0, %i1");
  // a null `tracer` stops tracing.
  void set_tracer(PackedFunc tracer);
  // main_module()'s exports by plain name, without `__init` / `__deinit`.
  std::vector<std::string> function_names() const override;

 protected:
  // The linked context; a module that links lazily links now.
  virtual Context& context() = 0;
  // The instance the module runs under (its limits apply to its calls).
  virtual const std::shared_ptr<Instance>& instance() const = 0;
  // A packed function that calls export `full_name` (which must exist) and
  // names itself `display_name` in errors; it holds `self`.
  PackedFunc packed_function(const std::string& full_name, const std::string& display_name, const Module& self);

 private:
  // Calls under the context's budget, traced while a tracer is set.
  std::vector<Value> call(const std::string& full_name, const std::vector<Value>& args);

  std::mutex tracer_mutex_;
  PackedFunc tracer_;
};

// The `graphrt_vm` record's and graphrt.vm.load's module: `program` linked
// after the built-in `tensor` and `tvm` modules, `extra` in order and the
// dependencies it declares (relative sources taken from `base_dir`, or from
// the directory of the library whose tree the module joins). Linked now when
// `link_now`, else when it joins a library's tree or is first used; `tvm.call`
// reaches the kernels of that library. Plain export names only.
// Runs under `instance` (its module factories and limits: the back end's
// instance of the runtime that made it).
graphrt::Module make_program_module(std::shared_ptr<BytecodeModule> program,
                                    std::vector<std::shared_ptr<VmModule>> extra, std::string base_dir,
                                    bool link_now, std::shared_ptr<Instance> instance);

// graphrt.vm.link's module: one context holding the built-in `tensor` and
// `tvm` modules (no kernels: tvm.call reports them missing), then each of
// `specs` (load_module_file forms) in order, each after the dependencies it
// declares (relative sources taken from its own directory). Functions by full
// name (`module.function`, any linked module) or plain name (the last one).
// Runs under `instance`, as above.
graphrt::Module make_context_module(const std::vector<std::string>& specs, std::shared_ptr<Instance> instance);

// Thread-safe: interrupts every VM module in the tree under `root` (imports included).
void interrupt_tree(graphrt::ModuleNode* root);

}  // namespace vm
}  // namespace graphrt
