// An instance of a served model: one graphrt::Runner (graph executor or Relax
// VM alike, graphrt/session.h), its inputs bound from a request's tensors
// (checked once, by the model, before it took the instance) and its outputs
// handed out as views of the run's own memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graphrt/session.h"
#include "models/instance_pool.h"

namespace graphrt_serve {

class RunnerInstance : public Instance {
 public:
  // `output_names`: the protocol's names of the outputs, in order; an output beyond them
  // (a Relax function's, known only after a run) is output_<i>.
  RunnerInstance(std::unique_ptr<graphrt::Runner> runner, std::vector<std::string> output_names);

  // `inputs` in the runner's function's parameter order, already checked against its metadata.
  void run(const std::vector<const InputTensor*>& inputs, std::vector<OutputTensor>* outputs,
           InferTimings* timings) override;

 private:
  void set_inputs(const std::vector<const InputTensor*>& inputs);
  void read_outputs(std::vector<OutputTensor>* outputs);

  std::unique_ptr<graphrt::Runner> runner_;
  std::vector<std::string> output_names_;
  std::vector<graphrt::NDArray> host_copies_;  // of outputs on a device, until the next run
};

// `in` (checked against input `index` of the runner's function) bound to that input, with
// `shape` in place of its own (batch exports pad the rows). A copy: the request's bytes may be
// unaligned, and they go when the request does.
void bind_checked_input(graphrt::Runner& runner, int index, const InputTensor& in, std::vector<int64_t> shape,
                        const char* data);

// `array` as the protocol's output `name`, a view of its bytes: its own when it is a contiguous
// array on the host, else those of a host copy made in `*host_copy`. Valid while those bytes
// are (for a runner's output, until its next run). Throws graphrt::Error naming the tensor
// when its dtype has no protocol datatype.
OutputTensor output_view(const graphrt::NDArray& array, const std::string& name, graphrt::NDArray* host_copy);

}  // namespace graphrt_serve
