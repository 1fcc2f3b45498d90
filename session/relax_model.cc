// A Relax executable in the session layer: its functions, their parameters'
// names, dtypes and shapes as the code checks them, from the VM (through
// graphrt/relax_vm.h), runners over one VM each.
#include "graphrt/device_api.h"
#include "input_tensor.h"
#include "model_state.h"

namespace graphrt {

namespace {

// A parameter as the function's code checks it (graphrt/relax_vm.h's RelaxParamSpec).
TensorSpec param_spec(const RelaxVM& vm, const std::string& function, int64_t index, const std::string& name) {
  const RelaxParamSpec s = vm.param_spec(function, index);
  TensorSpec t;
  t.name = name;
  t.known = s.known();
  if (!t.known) return t;
  t.dtype = s.dtype;
  t.shape = s.dims;
  t.symbols = s.symbols;
  return t;
}

}  // namespace

void load_relax_model(Model::State& state, const ModelSource& source) {
  use_root_params_cache(state.root, source);  // before any VM is made over the executable
  // The metadata only: the runners' VMs run on the model's device.
  RelaxVM vm(state.root, cpu(), RelaxVM::Allocator::kPooled, *state.runtime);
  for (const std::string& name : vm.functions()) {
    FunctionSpec f;
    f.name = name;
    const std::vector<std::string> params = vm.param_names(name);
    for (size_t i = 0; i < params.size(); ++i)
      f.inputs.push_back(param_spec(vm, name, static_cast<int64_t>(i), params[i]));
    state.functions.push_back(std::move(f));
  }
}

namespace {

class RelaxRunner final : public Runner {
 public:
  RelaxRunner(std::shared_ptr<Model::State> state, const FunctionSpec& function)
      : state_(std::move(state)),
        function_(function),
        vm_(state_->root, state_->device, RelaxVM::Allocator::kPooled, *state_->runtime),
        apis_(*state_->runtime, {state_->device}),
        inputs_(function.inputs.size()),
        call_(vm_.function(function_.name)),
        values_(function.inputs.size()),
        codes_(function.inputs.size(), kTVMNDArrayHandle) {}
  const FunctionSpec& function() const override { return function_; }
  // A copy on the model's device: kernels may rely on the allocator's alignment. The function's
  // code checks each argument's dtype and shape when called.
  void set_input(const std::string& name, const DLTensor* value) override {
    const size_t index = index_of(name);
    check(index, value, InputUse::kCopied);
    bind_copy(index, value);
  }
  void set_checked_input(int index, const DLTensor* value) override {
    bind_copy(static_cast<size_t>(index), value);
  }
  void set_input_zero_copy(const std::string& name, const DLTensor* value) override {
    // The caller's memory, kept alive by the caller until the run is done. The VM's tensors
    // have no strides: only compact memory may be wrapped as one.
    const size_t index = index_of(name);
    check(index, value, InputUse::kZeroCopy);
    if (!(value->device == state_->device))
      throw Error("input " + quote_untrusted(name) + ": a zero-copy tensor must be on the model's device " +
                  device_to_string(state_->device) + ", got " + device_to_string(value->device))
          .with("tensor", name);
    inputs_[index] = NDArray::wrap(static_cast<char*>(value->data) + value->byte_offset,
                                            std::vector<int64_t>(value->shape, value->shape + value->ndim), value->dtype,
                                            value->device, nullptr);
  }
  void run() override {
    require_inputs("run()");
    // The function looked up once and its arguments laid out in place: a run of a plain tensor
    // result allocates nothing here.
    for (size_t i = 0; i < inputs_.size(); ++i) values_[i].v_handle = inputs_[i].handle();
    call_->call(TVMArgs(values_.data(), codes_.data(), static_cast<int>(values_.size())), &ret_);
    result_ = Value::from(ret_);
    ret_.set_none();
    ran_ = true;
    outputs_.clear();  // its capacity kept: a run of a plain tensor result allocates nothing here
    result_.append_tensors(&outputs_);
  }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  NDArray output(int index) const override {
    if (index < 0 || static_cast<size_t>(index) >= outputs_.size())
      throw Error(ErrorKind::kOutOfRange, "output " + std::to_string(index) + " out of range (the run gave " +
                  std::to_string(outputs_.size()) + ")");
    return outputs_[index];
  }
  RunProfile profile(int /*repeat*/, int /*warmup*/) override {
    require_inputs("profile()");
    return RunProfile{vm_.profile(function_.name, inputs_), vm_.trace(function_.name, inputs_)};
  }
  std::optional<MemoryReport> memory_report() const override { return std::nullopt; }
  // Each Relax runner makes its own VM over the model's executable: it shares no executor.
  RunnerSharing sharing_with(const Runner&) const override { return {}; }
  Value result() const override {
    if (!ran_) throw Error(ErrorKind::kFailedPrecondition, "result() before the first run of " + quote_untrusted(function_.name));
    return result_;
  }

 private:
  void require_inputs(const char* call) const {
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (!inputs_[i].defined())
        throw Error(ErrorKind::kFailedPrecondition,
                    std::string(call) + " before input " + quote_untrusted(function_.inputs[i].name) + " was set")
            .with("tensor", function_.inputs[i].name);
  }
  void check(size_t index, const DLTensor* value, InputUse use) const {
    const TensorSpec& t = function_.inputs[index];
    check_input_tensor(value, t.name, use, t.known ? static_cast<int>(t.shape.size()) : -1);
  }
  void bind_copy(size_t index, const DLTensor* value) {
    NDArray copy = apis_.empty(std::vector<int64_t>(value->shape, value->shape + value->ndim), value->dtype,
                               state_->device);
    apis_.copy(value, copy.handle());
    inputs_.at(index) = copy;
  }
  size_t index_of(const std::string& name) const {
    for (size_t i = 0; i < function_.inputs.size(); ++i)
      if (function_.inputs[i].name == name) return i;
    std::string names;
    for (const TensorSpec& t : function_.inputs) names += (names.empty() ? "" : ", ") + shown_name(t.name);
    throw Error(ErrorKind::kNotFound, "function " + quote_untrusted(function_.name) + " has no parameter " +
                                          quote_untrusted(name) + " (parameters: " + names + ")")
        .with("tensor", name);
  }
  std::shared_ptr<Model::State> state_;
  FunctionSpec function_;
  RelaxVM vm_;
  DeviceApis apis_;  // the model's device in the session's runtime: input copies
  std::vector<NDArray> inputs_;
  PackedFunc call_;               // the VM function
  std::vector<TVMValue> values_;  // its arguments: inputs_' handles
  std::vector<int> codes_;
  RetValue ret_;
  Value result_;
  bool ran_ = false;
  std::vector<NDArray> outputs_;
};

}  // namespace

std::unique_ptr<Runner> make_relax_runner(std::shared_ptr<Model::State> state, const FunctionSpec& function) {
  return std::make_unique<RelaxRunner>(std::move(state), function);
}

}  // namespace graphrt
