// Calls the VM observes one by one: TVM's instrument hook (set_instrument)
// and the profiler's timing. The interpreter's loop takes this path only
// while one of them is on, so an unobserved call pays a flag test.
#include <string>
#include <vector>

#include "backends/relax/interpreter.h"
#include "backends/relax/packed_convention.h"

namespace graphrt {
namespace relax {

namespace {

// TVM's VMInstrumentReturnKind::kSkipRun.
constexpr int64_t kSkipRun = 1;

// TVM hands dtype arguments to instruments as strings: Python callbacks read them that way.
Value instrument_arg(const Value& v) {
  if (const DLDataType* t = std::get_if<DLDataType>(&v)) return std::make_shared<const std::string>(dtype_to_string(*t));
  return v;
}

}  // namespace

void VirtualMachine::set_instrument(PackedFunc f) {
  instrument_ = std::move(f);
  observed_ = profiling_ || static_cast<bool>(instrument_);
}

// The callee as a value the instrument can inspect or call: a kernel's packed
// function, a closure over a VM function. A builtin works on this VM's state
// (its frames, storage and shape heap), so outside the VM it only says so.
Value VirtualMachine::callee_value(int32_t function) const {
  const Callee& c = linked_->callees[static_cast<size_t>(function)];
  const std::string& name = linked_->exe->functions[static_cast<size_t>(function)].name;
  switch (c.kind) {
    case Callee::kPacked:
      return c.packed;
    case Callee::kVMFunction:
      return Ref<ClosureObj>(make_ref<ClosureObj>(function, std::vector<Value>()));
    case Callee::kBuiltin:
      break;
  }
  return make_function([name](const TVMArgs&, RetValue*) {
    throw Error(ErrorKind::kUnsupported, "builtin " + quote_untrusted(name) + " runs inside the Relax VM only").with("function", name);
  }, name);
}

void VirtualMachine::observed_dispatch(int32_t function, const Value* const* args, int num_args, Value* ret) {
  auto run = [&] {
    if (profiling_) return timed_dispatch(function, args, num_args, ret);
    dispatch(function, args, num_args, ret);
  };
  if (!instrument_) return run();
  // The instrument may replace itself or turn itself off: this call keeps the one it started with.
  const PackedFunc instrument = instrument_;
  std::vector<Value> values;
  values.reserve(static_cast<size_t>(num_args) + 4);
  values.push_back(callee_value(function));
  values.push_back(std::make_shared<const std::string>(linked_->exe->functions[static_cast<size_t>(function)].name));
  values.push_back(int64_t{1});  // before_run
  values.push_back(Value());     // ret_value: none before the call
  for (int i = 0; i < num_args; ++i) values.push_back(instrument_arg(*args[i]));
  std::vector<const Value*> argv;
  argv.reserve(values.size());
  for (const Value& v : values) argv.push_back(&v);
  Value verdict;
  call_packed(instrument, argv.data(), static_cast<int>(argv.size()), &verdict);
  const int64_t* kind = std::get_if<int64_t>(&verdict);
  if (kind && *kind == kSkipRun) {
    *ret = Value();
    return;
  }
  run();
  values[2] = int64_t{0};
  values[3] = *ret;
  call_packed(instrument, argv.data(), static_cast<int>(argv.size()), &verdict);
}

}  // namespace relax
}  // namespace graphrt
