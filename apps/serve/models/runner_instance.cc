#include "models/runner_instance.h"

#include <chrono>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

void bind_checked_input(graphrt::Runner& runner, int index, const InputTensor& in, std::vector<int64_t> shape,
                        const char* data) {
  DLTensor t{};
  t.data = const_cast<char*>(data);  // copied from: the request's bytes stay as they are
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int>(shape.size());
  datatype_to_dl(in.datatype, &t.dtype);
  t.shape = shape.data();
  runner.set_checked_input(index, &t);
}

OutputTensor output_view(const graphrt::NDArray& array, const std::string& name, graphrt::NDArray* host_copy) {
  OutputTensor out;
  out.name = name;
  if (!datatype_from_dl(array.dtype(), &out.datatype))
    throw Error(ErrorKind::kUnsupported, "output type " + dl_type_name(array.dtype()) + " has no protocol datatype")
        .with("tensor", name);
  out.shape = array.shape();
  const graphrt::NDArray* host = &array;
  const int device = array.device().device_type;
  if ((device != kDLCPU && device != kDLCUDAHost) || !graphrt::tensor_is_contiguous(array.handle())) {
    *host_copy = graphrt::NDArray::empty(array.shape(), array.dtype(), DLDevice{kDLCPU, 0});
    graphrt::copy_tensor(array.handle(), host_copy->handle());
    host = host_copy;
  }
  out.view = static_cast<const char*>((*host)->data) + (*host)->byte_offset;
  out.view_size = host->nbytes();
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
  for (size_t i = 0; i < inputs.size(); ++i)
    bind_checked_input(*runner_, static_cast<int>(i), *inputs[i], inputs[i]->shape, inputs[i]->data());
}

void RunnerInstance::read_outputs(std::vector<OutputTensor>* outputs) {
  outputs->clear();
  const int n = runner_->num_outputs();
  host_copies_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    outputs->push_back(output_view(runner_->output(i), k < output_names_.size() ? output_names_[k]
                                                                               : "output_" + std::to_string(i),
                                   &host_copies_[k]));
  }
}

}  // namespace graphrt_serve
