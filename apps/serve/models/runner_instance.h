// An instance of a served model: one graphrt::Runner (graph executor or Relax
// VM alike, graphrt/session.h), fed a request's tensors and read once into its
// response's outputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graphrt/session.h"
#include "models/served_model.h"

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
  void read_outputs(std::vector<OutputTensor>* outputs) const;

  std::unique_ptr<graphrt::Runner> runner_;
  std::vector<std::string> output_names_;
};

// `array` as the protocol's output `name`: its bytes copied once, from wherever it lives.
// Throws graphrt::Error naming the tensor when its dtype has no protocol datatype.
OutputTensor output_from(const graphrt::NDArray& array, const std::string& name);

}  // namespace graphrt_serve
