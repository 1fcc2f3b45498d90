// graphrt::RelaxVM (graphrt/relax_vm.h) over the VM module's TVM face: the executable's
// vm_load_executable, the VM's vm_initialization, its functions and its debug calls, by name,
// as TVM's own deploy code makes them. The one file that calls the Relax VM by name; the
// session layer stands on RelaxVM's typed calls (relax_model.cc, language_model.cc).
#include "graphrt/relax_vm.h"

namespace graphrt {

namespace {

ArgList arrays(const std::vector<NDArray>& args, const std::string* first = nullptr) {
  ArgList list;
  if (first) list.add_string(*first);
  for (const NDArray& a : args) list.add_ndarray(a);
  return list;
}

}  // namespace

RelaxVM::RelaxVM(Module executable, DLDevice device, Allocator allocator) : exe_(std::move(executable)) {
  const std::string key = exe_.get() ? exe_->type_key() : std::string("(none)");
  if (model_kind_of(exe_) != ModelKind::kRelax)
    throw Error(ErrorKind::kTypeMismatch, "RelaxVM: module '" + key + "' is not a Relax executable").with("tkey", key);
  vm_ = call_function(exe_->require_function("vm_load_executable"), ArgList()).as_module();
  ArgList init;
  if (device.device_type != kDLCPU)
    init.add_int(device.device_type).add_int(device.device_id).add_int(static_cast<int>(allocator));
  init.add_int(kDLCPU).add_int(0).add_int(static_cast<int>(allocator));
  call_function(vm_->require_function("vm_initialization"), init);
}

std::vector<std::string> RelaxVM::model_functions(const Module& vm) {
  static const char* const kInterface[] = {"vm_initialization", "set_input", "invoke_stateful", "get_output",
                                           "get_output_arity", "get_function_arity", "get_function_param_name",
                                           "save_function", "invoke_closure", "profile", "trace",
                                           "get_function_param_signature", "get_function_param_spec",
                                           "set_instruction_budget", "set_instrument"};
  std::vector<std::string> out;
  for (const std::string& name : vm->function_names()) {
    bool interface = false;
    for (const char* i : kInterface) interface = interface || name == i;
    if (!interface) out.push_back(name);
  }
  return out;
}

std::vector<std::string> RelaxVM::param_names(const std::string& function) const {
  const int64_t n = call_function(vm_->require_function("get_function_arity"), ArgList().add_string(function)).as_int();
  const PackedFunc name_of = vm_->require_function("get_function_param_name");
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(call_function(name_of, ArgList().add_string(function).add_int(i)).as_string());
  return out;
}

std::string RelaxVM::param_signature(const std::string& function, int64_t index) const {
  return call_function(vm_->require_function("get_function_param_signature"),
                       ArgList().add_string(function).add_int(index))
      .as_string();
}

RelaxParamSpec RelaxVM::param_spec(const std::string& function, int64_t index) const {
  return RelaxParamSpec::from_record(
      call_function(vm_->require_function("get_function_param_spec"), ArgList().add_string(function).add_int(index))
          .as_ndarray());
}

PackedFunc RelaxVM::function(const std::string& name) const { return vm_->require_function(name); }

std::string RelaxVM::executable_stats() const {
  return call_function(exe_->require_function("stats"), ArgList()).as_string();
}

std::string RelaxVM::executable_text() const {
  return call_function(exe_->require_function("as_text"), ArgList()).as_string();
}

Value RelaxVM::call(const std::string& function, const std::vector<NDArray>& args) {
  return Value::from(call_function(vm_->require_function(function), arrays(args)));
}

std::string RelaxVM::profile(const std::string& function, const std::vector<NDArray>& args) {
  return call_function(vm_->require_function("profile"), arrays(args, &function)).as_string();
}

std::string RelaxVM::trace(const std::string& function, const std::vector<NDArray>& args) {
  return call_function(vm_->require_function("trace"), arrays(args, &function)).as_string();
}

void RelaxVM::set_instrument(const PackedFunc& instrument) {
  TVMValue value;
  value.v_handle = instrument.get();
  int code = instrument ? kTVMPackedFuncHandle : kTVMNullptr;
  RetValue ret;
  vm_->require_function("set_instrument")->call(TVMArgs(&value, &code, 1), &ret);
}

void RelaxVM::set_instruction_budget(uint64_t n) {
  call_function(vm_->require_function("set_instruction_budget"), ArgList().add_int(static_cast<int64_t>(n)));
}

}  // namespace graphrt
