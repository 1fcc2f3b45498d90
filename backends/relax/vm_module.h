// The VM module (TVM's relax VirtualMachine as a runtime.Module): its
// functions are the executable's VM functions by name plus TVM's stateful
// interface (vm_initialization, set_input / invoke_stateful / get_output,
// arity and parameter queries, save_function, invoke_closure), profile and
// trace, and the parameter signatures its code checks.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/module.h"
#include "backends/relax/interpreter.h"
#include "backends/relax/param_signature.h"

namespace graphrt {
namespace relax {

class VmModuleNode : public ModuleNode {
 public:
  explicit VmModuleNode(std::shared_ptr<const LinkedExecutable> linked);
  std::string type_key() const override { return "relax.VirtualMachine"; }
  PackedFunc find_function(const std::string& name, const Module& self) override;
  std::vector<std::string> function_names() const override;

  VirtualMachine& vm() { return *vm_; }
  // Calls VM function `name` (an Error naming it when it does not exist).
  Value invoke(const std::string& name, const std::vector<Value>& args);

 private:
  struct Saved {
    int64_t function;
    std::vector<Value> args;
    bool include_return;
  };
  int64_t vm_function_index(const std::string& name) const;
  // What the code of function args[0] checks of its parameter args[1].
  ParamSignature param_signature(const TVMArgs& args) const;
  void initialize(const TVMArgs& args);
  void set_input(const TVMArgs& args);
  void get_output(const TVMArgs& args, RetValue* ret, bool arity);
  void save_function(const TVMArgs& args);
  std::string profile(const TVMArgs& args, bool trace);
  PackedFunc stateful_function(const std::string& name, const Module& self);

  std::shared_ptr<const LinkedExecutable> linked_;
  std::unique_ptr<VirtualMachine> vm_;
  std::map<std::string, std::vector<Value>> inputs_;
  std::map<std::string, Value> outputs_;
  std::map<std::string, Saved> saved_;
};

Module make_vm_module(std::shared_ptr<const LinkedExecutable> linked);

}  // namespace relax
}  // namespace graphrt
