#include "backends/relax/vm_module.h"

#include <chrono>

#include "graphrt/device_api.h"
#include "backends/relax/packed_convention.h"
#include "backends/relax/param_signature.h"
#include "backends/relax/profile_report.h"

namespace graphrt {
namespace relax {

namespace {

constexpr int kAllocatorNaive = 1;

// `own_tensors`: the VM's device APIs, through which borrowed tensors are copied (null: none is).
std::vector<Value> values_from(const TVMArgs& args, int begin, const DeviceApis* own_tensors) {
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(args.size() > begin ? args.size() - begin : 0));
  for (int i = begin; i < args.size(); ++i) {
    // A borrowed DLTensor kept past the call (set_input) is copied: its owner may free it.
    if (own_tensors && args.code(i) == kTVMDLTensorHandle) {
      const DLTensor* t = args.as_tensor(i);
      NDArray copy = own_tensors->empty(std::vector<int64_t>(t->shape, t->shape + t->ndim), t->dtype, t->device);
      own_tensors->copy(t, copy.handle());
      out.push_back(std::move(copy));
      continue;
    }
    out.push_back(value_from_arg(args, i));
  }
  return out;
}

std::vector<const Value*> pointers(const std::vector<Value>& values) {
  std::vector<const Value*> out;
  out.reserve(values.size());
  for (const Value& v : values) out.push_back(&v);
  return out;
}

void require(const TVMArgs& args, int n, const std::string& usage) {
  if (args.size() < n)
    throw Error(ErrorKind::kTypeMismatch, usage + ": " + std::to_string(args.size()) + " arguments given");
}

}  // namespace

VmModuleNode::VmModuleNode(std::shared_ptr<const LinkedExecutable> linked)
    : linked_(std::move(linked)), vm_(std::make_unique<VirtualMachine>(linked_, StoragePool::create(true))) {}

Module make_vm_module(std::shared_ptr<const LinkedExecutable> linked) {
  return Module(make_ref<VmModuleNode>(std::move(linked)));
}

int64_t VmModuleNode::vm_function_index(const std::string& name) const {
  const int64_t i = linked_->exe->find_function(name);
  if (i < 0 || linked_->exe->functions[static_cast<size_t>(i)].kind != FunctionKind::kVMFunc)
    throw Error(ErrorKind::kNotFound, "the Relax executable has no function " + quote_untrusted(name)).with("function", name);
  return i;
}

ParamSignature VmModuleNode::param_signature(const TVMArgs& args) const {
  const int64_t f = vm_function_index(args.as_string(0));
  std::vector<ParamSignature> params = param_signatures(*linked_->exe, f);
  const int64_t i = args.as_int(1);
  if (i < 0 || i >= static_cast<int64_t>(params.size()))
    throw Error(ErrorKind::kOutOfRange, quote_untrusted(args.as_string(0)) + " has no parameter " + std::to_string(i))
        .with("function", args.as_string(0));
  return std::move(params[static_cast<size_t>(i)]);
}

Value VmModuleNode::invoke(const std::string& name, const std::vector<Value>& args) {
  const int64_t f = vm_function_index(name);
  const std::vector<const Value*> argv = pointers(args);
  return vm_->call(f, argv.data(), static_cast<int>(argv.size()));
}

// vm_initialization(dev_type, dev_id, alloc_type, ...): one triple per device,
// the host last (added when absent, as TVM does). The allocator kind is the host's.
void VmModuleNode::initialize(const TVMArgs& args) {
  if (args.size() % 3 != 0 || args.size() == 0)
    throw Error("vm_initialization takes (device_type, device_id, allocator_type) triples; " +
                std::to_string(args.size()) + " arguments given");
  std::vector<DLDevice> devices;
  bool has_host = false;
  for (int i = 0; i < args.size(); i += 3) {
    const DLDevice dev{static_cast<DLDeviceType>(args.as_int(i)), static_cast<int32_t>(args.as_int(i + 1))};
    if (dev.device_type != kDLCPU && !linked_->runtime_or_default().device_api_or_null(dev.device_type))
      throw Error(ErrorKind::kUnsupported, "device type " + std::to_string(dev.device_type) +
                                               " has no device API in this graphrt (built without its back end, "
                                               "or its driver is absent)")
          .with("argument", std::to_string(i));
    has_host = has_host || dev.device_type == kDLCPU;
    devices.push_back(dev);
  }
  if (!has_host) devices.push_back(DLDevice{kDLCPU, 0});
  const bool pooled = args.as_int(args.size() - 1) != kAllocatorNaive;
  const uint64_t budget = vm_->instruction_budget();
  PackedFunc instrument = vm_->instrument();
  auto vm = std::make_unique<VirtualMachine>(linked_, StoragePool::create(pooled));
  vm->set_devices(std::move(devices));
  vm->set_instruction_budget(budget);
  vm->set_instrument(std::move(instrument));
  vm_ = std::move(vm);
}

void VmModuleNode::set_input(const TVMArgs& args) {
  require(args, 1, "set_input(function, args...)");
  const std::string name = args.as_string(0);
  const FunctionInfo& f = linked_->exe->functions[static_cast<size_t>(vm_function_index(name))];
  std::vector<Value> values = values_from(args, 1, &vm_->device_apis());
  if (static_cast<int64_t>(values.size()) != f.num_args)
    throw Error(ErrorKind::kTypeMismatch, "set_input: " + quote_untrusted(name) + " takes " + std::to_string(f.num_args) + " arguments, " +
                std::to_string(values.size()) + " given")
        .with("function", name);
  inputs_[name] = std::move(values);
}

void VmModuleNode::get_output(const TVMArgs& args, RetValue* ret, bool arity) {
  require(args, 1, "get_output(function, index...)");
  const std::string name = args.as_string(0);
  auto it = outputs_.find(name);
  if (it == outputs_.end())
    throw Error(ErrorKind::kFailedPrecondition, "no output of " + quote_untrusted(name) + ": call invoke_stateful first")
        .with("function", name);
  const Value* v = &it->second;
  for (int i = 1; i < args.size(); ++i) {
    const auto* t = std::get_if<Ref<TupleObj>>(v);
    const int64_t k = args.as_int(i);
    if (!t) throw Error(ErrorKind::kTypeMismatch, "output of " + quote_untrusted(name) + " indexed at depth " + std::to_string(i) + " is not a tuple");
    if (k < 0 || k >= static_cast<int64_t>((*t)->items.size()))
      throw Error(ErrorKind::kOutOfRange, "output index " + std::to_string(k) + " outside a tuple of " +
                                              std::to_string((*t)->items.size()));
    v = &(*t)->items[static_cast<size_t>(k)];
  }
  if (!arity) return value_to_ret(*v, ret);
  const auto* t = std::get_if<Ref<TupleObj>>(v);
  ret->set_int(t ? static_cast<int64_t>((*t)->items.size()) : -1);
}

// save_function(function, saved_name, include_return, args...): a function of
// no arguments that calls `function` with `args` (for time_evaluator).
void VmModuleNode::save_function(const TVMArgs& args) {
  require(args, 3, "save_function(function, saved_name, include_return, args...)");
  Saved s{vm_function_index(args.as_string(0)), values_from(args, 3, &vm_->device_apis()), args.as_int(2) != 0};
  saved_[args.as_string(1)] = std::move(s);
}

// profile(function, args...): one call with every callee timed; the table as
// text. trace(function, args...): the same call's Chrome trace.
std::string VmModuleNode::profile(const TVMArgs& args, bool trace) {
  const char* usage = trace ? "trace(function, args...)" : "profile(function, args...)";
  require(args, 1, usage);
  const std::string fn = args.as_string(0);
  const int64_t index = vm_function_index(fn);
  const std::vector<Value> values = values_from(args, 1, nullptr);
  struct Off {
    VirtualMachine& vm;
    ~Off() {
      vm.set_profiling(false);
      vm.set_tracing(false);
    }
  } off{*vm_};
  vm_->set_profiling(true);
  vm_->set_tracing(trace);
  const auto t0 = std::chrono::steady_clock::now();
  invoke(fn, values);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return trace ? chrome_trace(*vm_, index, seconds * 1e6) : profile_table(*vm_, seconds);
}

PackedFunc VmModuleNode::stateful_function(const std::string& name, const Module& self) {
  if (name == "vm_initialization")
    return make_function([this, self](const TVMArgs& args, RetValue*) { initialize(args); }, name);
  if (name == "set_input") return make_function([this, self](const TVMArgs& args, RetValue*) { set_input(args); }, name);
  if (name == "invoke_stateful")
    return make_function([this, self](const TVMArgs& args, RetValue*) {
      require(args, 1, "invoke_stateful(function)");
      const std::string fn = args.as_string(0);
      auto it = inputs_.find(fn);
      if (it == inputs_.end())
        throw Error(ErrorKind::kFailedPrecondition, "invoke_stateful: no inputs set for " + quote_untrusted(fn)).with("function", fn);
      outputs_[fn] = invoke(fn, it->second);
    }, name);
  if (name == "get_output")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) { get_output(args, ret, false); }, name);
  if (name == "get_output_arity")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) { get_output(args, ret, true); }, name);
  if (name == "get_function_arity")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) {
      require(args, 1, "get_function_arity(function)");
      ret->set_int(linked_->exe->functions[static_cast<size_t>(vm_function_index(args.as_string(0)))].num_args);
    }, name);
  if (name == "get_function_param_name")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) {
      require(args, 2, "get_function_param_name(function, index)");
      const FunctionInfo& f = linked_->exe->functions[static_cast<size_t>(vm_function_index(args.as_string(0)))];
      const int64_t i = args.as_int(1);
      if (i < 0 || i >= static_cast<int64_t>(f.param_names.size()))
        throw Error(ErrorKind::kOutOfRange, quote_untrusted(f.name) + " has no parameter " + std::to_string(i)).with("function", f.name);
      ret->set_string(f.param_names[static_cast<size_t>(i)]);
    }, name);
  if (name == "save_function")
    return make_function([this, self](const TVMArgs& args, RetValue*) { save_function(args); }, name);
  if (name == "invoke_closure")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) {
      require(args, 1, "invoke_closure(closure, args...)");
      const Value callee = value_from_arg(args, 0);
      const std::vector<Value> rest = values_from(args, 1, nullptr);
      const std::vector<const Value*> argv = pointers(rest);
      value_to_ret(vm_->call_value(callee, argv.data(), static_cast<int>(argv.size())), ret);
    }, name);
  if (name == "profile")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) { ret->set_string(profile(args, false)); }, name);
  if (name == "trace")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) { ret->set_string(profile(args, true)); }, name);
  if (name == "get_function_param_signature")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) {
      require(args, 2, "get_function_param_signature(function, index)");
      ret->set_string(signature_text(param_signature(args)));
    }, name);
  if (name == "get_function_param_spec")
    return make_function([this, self](const TVMArgs& args, RetValue* ret) {
      require(args, 2, "get_function_param_spec(function, index)");
      const std::vector<int64_t> record = signature_record(param_signature(args));
      NDArray out = vm_->device_apis().empty({static_cast<int64_t>(record.size())}, DLDataType{kDLInt, 64, 1},
                                             DLDevice{kDLCPU, 0});
      out.copy_from_bytes(record.data(), record.size() * sizeof(int64_t));
      ret->set_ndarray(out);
    }, name);
  if (name == "set_instrument")
    return make_function([this, self](const TVMArgs& args, RetValue*) {
      require(args, 1, "set_instrument(function or None)");
      if (args.code(0) == kTVMNullptr) return vm_->set_instrument(PackedFunc());
      if (args.code(0) != kTVMPackedFuncHandle)
        throw Error(ErrorKind::kTypeMismatch, std::string("set_instrument takes a function or None, not a ") +
                                                  type_code_name(args.code(0)));
      vm_->set_instrument(args.as_function(0));
    }, name);
  if (name == "set_instruction_budget")
    return make_function([this, self](const TVMArgs& args, RetValue*) {
      require(args, 1, "set_instruction_budget(n)");
      const int64_t n = args.as_int(0);
      if (n < 0) throw Error("set_instruction_budget: the budget must not be negative");
      vm_->set_instruction_budget(static_cast<uint64_t>(n));
    }, name);
  return PackedFunc();
}

PackedFunc VmModuleNode::find_function(const std::string& name, const Module& self) {
  if (PackedFunc f = stateful_function(name, self)) return f;
  auto saved = saved_.find(name);
  if (saved != saved_.end()) {
    return make_function([this, self, name](const TVMArgs&, RetValue* ret) {
      const Saved& s = saved_.at(name);
      const std::vector<const Value*> argv = pointers(s.args);
      Value v = vm_->call(s.function, argv.data(), static_cast<int>(argv.size()));
      if (s.include_return) value_to_ret(v, ret);
    }, name);
  }
  const int64_t index = linked_->exe->find_function(name);
  if (index < 0 || linked_->exe->functions[static_cast<size_t>(index)].kind != FunctionKind::kVMFunc) return PackedFunc();
  return make_function([this, self, index](const TVMArgs& args, RetValue* ret) {
    // A model function's few arguments stay on the stack: a call allocates nothing here.
    constexpr int kOnStack = 8;
    if (args.size() <= kOnStack) {
      Value values[kOnStack];
      const Value* argv[kOnStack];
      for (int i = 0; i < args.size(); ++i) {
        values[i] = value_from_arg(args, i);
        argv[i] = &values[i];
      }
      value_to_ret(vm_->call(index, argv, args.size()), ret);
      return;
    }
    const std::vector<Value> values = values_from(args, 0, nullptr);
    const std::vector<const Value*> argv = pointers(values);
    value_to_ret(vm_->call(index, argv.data(), static_cast<int>(argv.size())), ret);
  }, name);
}

std::vector<std::string> VmModuleNode::function_names() const {
  std::vector<std::string> names = {"vm_initialization", "set_input", "invoke_stateful", "get_output",
                                    "get_output_arity", "get_function_arity", "get_function_param_name",
                                    "save_function", "invoke_closure", "profile", "trace",
                                    "get_function_param_signature", "get_function_param_spec", "set_instruction_budget",
                                    "set_instrument"};
  for (const FunctionInfo& f : linked_->exe->functions)
    if (f.kind == FunctionKind::kVMFunc) names.push_back(f.name);
  return names;
}

}  // namespace relax
}  // namespace graphrt
