#include "models/runner_instance.h"

#include <chrono>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

OutputTensor output_from(const graphrt::NDArray& array, const std::string& name) {
  OutputTensor out;
  out.name = name;
  if (!datatype_from_dl(array.dtype(), &out.datatype))
    throw Error(ErrorKind::kUnsupported, "output type " + dl_type_name(array.dtype()) + " has no protocol datatype")
        .with("tensor", name);
  out.shape = array.shape();
  out.data.resize(array.nbytes());
  if (!out.data.empty()) array.copy_to_bytes(&out.data[0], out.data.size());
  return out;
}

RunnerInstance::RunnerInstance(std::unique_ptr<graphrt::Runner> runner, std::vector<std::string> output_names)
    : runner_(std::move(runner)), output_names_(std::move(output_names)) {}

void RunnerInstance::run(const std::vector<const InputTensor*>& inputs, std::vector<OutputTensor>* outputs,
                         InferTimings* timings) {
  auto t0 = Clock::now();
  set_inputs(inputs);
  timings->input_ns = ns_since(t0);
  t0 = Clock::now();
  runner_->run();
  timings->infer_ns = ns_since(t0);
  t0 = Clock::now();
  read_outputs(outputs);
  timings->output_ns = ns_since(t0);
}

void RunnerInstance::set_inputs(const std::vector<const InputTensor*>& inputs) {
  const std::vector<graphrt::TensorSpec>& params = runner_->function().inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputTensor& in = *inputs[i];
    std::vector<int64_t> shape = in.shape;
    DLTensor t{};
    t.data = const_cast<char*>(in.data());  // set_input copies it: the request's bytes stay as they are
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    datatype_to_dl(in.datatype, &t.dtype);
    t.shape = shape.data();
    runner_->set_input(params[i].name, &t);
  }
}

void RunnerInstance::read_outputs(std::vector<OutputTensor>* outputs) const {
  outputs->clear();
  const int n = runner_->num_outputs();
  for (int i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    outputs->push_back(
        output_from(runner_->output(i), k < output_names_.size() ? output_names_[k] : "output_" + std::to_string(i)));
  }
}

}  // namespace graphrt_serve
