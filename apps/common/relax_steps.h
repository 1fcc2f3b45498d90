// A case.json "steps" script (fixture kind relax_vm_kvcache): a language
// model driven call by call as an engine drives it (create the KV cache, add
// a sequence, begin a forward pass, prefill, end it, decode ...), each step a
// VM function or a registered global function under TVM's name:
//   {"call": VM function, "args": [...], "result": name or [names], "expect": {name: file.npy}}
//   {"global": function, "args": [...], "expect_int": n}
// An argument is a value named by an earlier result, {"int": n}, {"shape": [...]}
// (a ShapeTuple) or {"file": x.npy}. The one reader of the format
// (graphrt-run --steps, the tests).
#pragma once

#include <string>
#include <vector>

#include "graphrt/module.h"

namespace graphrt_apps {

struct StepCheck {
  size_t step = 0;         // index in "steps"
  std::string what;        // "decode -> logits vs output_decode0_logits.npy"
  bool matches = false;
  bool tensor = false;     // an output compared with an .npy file (else an int)
  bool bit_exact = false;  // a tensor equal byte for byte
  double max_difference = 0;
  std::string problem;     // why it does not match
};

// Runs the steps of the case.json at `case_path` on one VM over `root`;
// files are relative to the case's folder; outputs are compared within
// `tolerance` (absolute). Throws graphrt::Error naming the step that failed.
std::vector<StepCheck> run_relax_steps(const graphrt::Module& root, const std::string& case_path, double tolerance);

}  // namespace graphrt_apps
