// A case.json "steps" script (fixture kind relax_vm_kvcache): a language
// model driven step by step as an engine drives it, written with TVM's names
// (the calls TVM's Python made to produce the fixture):
//   {"call": VM function, "args": [...], "result": name or [names], "expect": {name: file.npy}}
//   {"global": builtin, "args": [...], "expect_int": n}
// An argument is a value named by an earlier result, {"int": n}, {"shape": [...]}
// or {"file": x.npy}. The one reader of the format (graphrt-run --steps, the tests).
//
// The script is replayed on graphrt::LanguageModel (graphrt/language_model.h), not
// by calling the names: the first call creates the KV cache (its name and its five
// shape arguments are the LanguageModelOptions' create_cache and sizes); the
// kv_state_add_sequence / remove_sequence builtins add and remove a sequence;
// kv_state_begin_forward([seq], [n]), a call of a forward function on n token ids
// from a file, and kv_state_end_forward are one LanguageModel::prefill or decode
// (the first forward function called is the prefill, the next other one the
// decode), its logits bound to the call's first result;
// attention_kv_cache_get_total_sequence_length is total_sequence_length(). Any
// other step, or a forward pass of several sequences, is refused.
#pragma once

#include <string>
#include <vector>

#include "graphrt/session.h"

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

// Runs the steps of the case.json at `case_path` on a LanguageModel over
// `model` (a Relax executable); files are relative to the case's folder;
// outputs are compared within `tolerance` (absolute). Throws graphrt::Error
// naming the step that failed.
// Reads a case file's text as run_relax_steps does, checking every step's form before any runs:
// an object naming one "call" or "global"; each argument a name, {"int": n}, {"shape": [n, ...]}
// (dimensions not negative) or {"file": "x.npy"}, every n a JSON integer within int64 (0.5, 5.0
// or 2^63 are refused, never truncated); "result" a name or names; "expect" names to files;
// "expect_int" an integer. Throws graphrt::Error naming the step and the field; returns the
// number of steps.
size_t check_relax_steps(const std::string& text, const std::string& origin);

std::vector<StepCheck> run_relax_steps(const graphrt::Model& model, const std::string& case_path, double tolerance);

}  // namespace graphrt_apps
