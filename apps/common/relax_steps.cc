#include "common/relax_steps.h"

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/expected_output.h"
#include "common/npy.h"
#include "graphrt/error.h"
#include "graphrt/language_model.h"

namespace graphrt_apps {

namespace {

using json = nlohmann::json;
using graphrt::Error;
using graphrt::ErrorKind;

// The builtins a script may name (TVM's names), each replayed as one LanguageModel step.
enum class Builtin { kAddSequence, kRemoveSequence, kBeginForward, kEndForward, kTotalLength };

const std::map<std::string, Builtin>& builtins() {
  static const std::map<std::string, Builtin> table = {
      {"vm.builtin.kv_state_add_sequence", Builtin::kAddSequence},
      {"vm.builtin.kv_state_remove_sequence", Builtin::kRemoveSequence},
      {"vm.builtin.kv_state_begin_forward", Builtin::kBeginForward},
      {"vm.builtin.kv_state_end_forward", Builtin::kEndForward},
      {"vm.builtin.attention_kv_cache_get_total_sequence_length", Builtin::kTotalLength},
  };
  return table;
}

struct StepsRun {
  std::string dir;
  const graphrt::Model* model = nullptr;
  graphrt::LanguageModelOptions options;  // the forward functions' names, from a first look at the steps
  std::unique_ptr<graphrt::LanguageModel> lm;
  std::string cache;                             // the create call's result name
  std::map<std::string, graphrt::NDArray> tensors;  // the forward calls' logits, by result name
  bool begun = false;                            // kv_state_begin_forward seen, its call not yet
  bool forwarded = false;                        // the call seen, kv_state_end_forward not yet
  int64_t sequence = 0, length = 0;              // the pass begun: its sequence and token count
  double tolerance = 0;
  std::vector<StepCheck> checks;
};

const json& arg(const json& step, size_t i) {
  const json& args = step.at("args");
  if (!args.is_array() || args.size() <= i) throw Error("the step has no argument " + std::to_string(i));
  return args[i];
}

int64_t int_argument(const json& a, size_t i) {
  if (!a.is_object() || !a.contains("int")) throw Error("argument " + std::to_string(i) + " must be {\"int\": n}: " + a.dump());
  return a["int"].get<int64_t>();
}

// A {"shape": [v]} argument of one value: a forward pass is of one sequence.
int64_t one_value_shape(const json& a, size_t i) {
  if (!a.is_object() || !a.contains("shape") || !a["shape"].is_array() || a["shape"].size() != 1)
    throw Error(ErrorKind::kUnsupported, "argument " + std::to_string(i) +
                                             " must be {\"shape\": [v]}: a forward pass of one sequence (" + a.dump() + ")");
  return a["shape"][0].get<int64_t>();
}

// Argument 0 of a builtin: the create call's result.
void require_cache(const StepsRun& run, const json& step) {
  if (!run.lm) throw Error(ErrorKind::kFailedPrecondition, "no KV cache yet (the first call step creates it)");
  const json& a = arg(step, 0);
  if (!a.is_string() || a.get<std::string>() != run.cache)
    throw Error("argument 0 must name the KV cache ('" + run.cache + "'): " + a.dump());
}

std::vector<int32_t> token_file(const StepsRun& run, const json& a) {
  if (!a.is_object() || !a.contains("file")) throw Error("the token ids must be {\"file\": x.npy}: " + a.dump());
  const std::string file = a["file"].get<std::string>();
  const NpyArray ids = read_npy(run.dir + "/" + file);
  const int64_t n = ids.numel();
  std::vector<int32_t> out(static_cast<size_t>(n));
  if (ids.dtype.code == kDLInt && ids.dtype.bits == 32) {
    std::memcpy(out.data(), ids.data.data(), out.size() * sizeof(int32_t));
  } else if (ids.dtype.code == kDLInt && ids.dtype.bits == 64) {
    std::vector<int64_t> wide(out.size());
    std::memcpy(wide.data(), ids.data.data(), wide.size() * sizeof(int64_t));
    for (size_t i = 0; i < wide.size(); ++i) out[i] = static_cast<int32_t>(wide[i]);
  } else {
    throw Error(ErrorKind::kTypeMismatch, file + " holds " + npy_descr(ids.dtype) + ", not int32 or int64 token ids");
  }
  return out;
}

// The first call: the cache's create function and its sizes.
void create_cache(StepsRun& run, const json& step) {
  run.options.create_cache = step["call"].get<std::string>();
  run.options.max_batch_size = one_value_shape(arg(step, 0), 0);
  run.options.max_total_seq_len = one_value_shape(arg(step, 1), 1);
  run.options.prefill_chunk_size = one_value_shape(arg(step, 2), 2);
  run.options.page_size = one_value_shape(arg(step, 3), 3);
  if (one_value_shape(arg(step, 4), 4) != 0)
    throw Error(ErrorKind::kUnsupported, "argument 4 (support_sliding_window) is not 0: graphrt's cache has no sliding windows");
  if (!step.contains("result") || !step["result"].is_string()) throw Error("the create call must name its result");
  run.cache = step["result"].get<std::string>();
  run.lm = std::make_unique<graphrt::LanguageModel>(*run.model, run.options);
}

// A forward function's call inside kv_state_begin_forward / end_forward.
void forward(StepsRun& run, const std::string& name, const json& step) {
  if (!run.begun) throw Error(ErrorKind::kFailedPrecondition, "a forward call outside kv_state_begin_forward / end_forward");
  const std::vector<int32_t> tokens = token_file(run, arg(step, 0));
  if (static_cast<int64_t>(tokens.size()) != run.length)
    throw Error("the call takes " + std::to_string(tokens.size()) + " token ids; kv_state_begin_forward announced " +
                std::to_string(run.length));
  graphrt::NDArray logits;
  if (name == run.options.prefill) {
    logits = run.lm->prefill(run.sequence, tokens);
  } else {
    if (tokens.size() != 1) throw Error("a decode call takes one token id, not " + std::to_string(tokens.size()));
    logits = run.lm->decode(run.sequence, tokens[0]);
  }
  run.begun = false;
  run.forwarded = true;
  const json names = step.value("result", json::array());
  if (names.is_array() && !names.empty()) run.tensors[names[0].get<std::string>()] = logits;
}

int64_t run_builtin(StepsRun& run, Builtin b, const json& step) {
  require_cache(run, step);
  switch (b) {
    case Builtin::kAddSequence:
      run.lm->add_sequence(int_argument(arg(step, 1), 1));
      return 0;
    case Builtin::kRemoveSequence:
      run.lm->remove_sequence(int_argument(arg(step, 1), 1));
      return 0;
    case Builtin::kBeginForward:
      if (run.begun || run.forwarded) throw Error(ErrorKind::kFailedPrecondition, "a forward pass is under way");
      run.sequence = one_value_shape(arg(step, 1), 1);
      run.length = one_value_shape(arg(step, 2), 2);
      run.begun = true;
      return 0;
    case Builtin::kEndForward:
      if (!run.forwarded) throw Error(ErrorKind::kFailedPrecondition, "no forward call since kv_state_begin_forward");
      run.forwarded = false;
      return 0;
    case Builtin::kTotalLength:
      return run.lm->total_sequence_length();
  }
  return 0;
}

StepCheck compare(StepsRun& run, size_t index, const std::string& step_name, const std::string& name,
                  const std::string& file) {
  StepCheck c;
  c.step = index;
  c.what = step_name + " -> " + name + " vs " + file;
  c.tensor = true;
  auto it = run.tensors.find(name);
  if (it == run.tensors.end()) throw Error("the step gives no logits named '" + name + "'");
  const graphrt::NDArray got = it->second.copy_to_device(graphrt::cpu());
  ExpectedOutput expected{0, file, read_npy(run.dir + "/" + file)};
  const ExpectedOutputResult r = check_expected_outputs({got}, {expected}, run.tolerance).at(0);
  c.matches = r.matches;
  c.max_difference = r.max_difference;
  c.problem = r.problem;
  c.bit_exact = r.matches && got.nbytes() == expected.array.data.size() &&
                std::memcmp(got->data, expected.array.data.data(), got.nbytes()) == 0;
  return c;
}

void check_int(StepsRun& run, size_t index, const std::string& name, const json& step, int64_t got) {
  StepCheck c;
  c.step = index;
  const int64_t want = step["expect_int"].get<int64_t>();
  c.what = name + " = " + std::to_string(got) + " (expected " + std::to_string(want) + ")";
  c.matches = got == want;
  if (!c.matches) c.problem = "got " + std::to_string(got);
  run.checks.push_back(c);
}

void run_step(StepsRun& run, size_t index, const json& step) {
  const bool is_call = step.contains("call");
  const std::string name = is_call ? step["call"].get<std::string>() : step.at("global").get<std::string>();
  try {
    int64_t result = 0;
    if (is_call && !run.lm) {
      create_cache(run, step);
    } else if (is_call) {
      forward(run, name, step);
    } else {
      auto b = builtins().find(name);
      if (b == builtins().end())
        throw Error(ErrorKind::kUnsupported, "not a step of a language model's engine (graphrt::LanguageModel replays "
                                             "kv_state_add_sequence, remove_sequence, begin_forward, end_forward and "
                                             "attention_kv_cache_get_total_sequence_length)");
      result = run_builtin(run, b->second, step);
    }
    const json expect = step.value("expect", json::object());  // kept: items() refers into it
    for (const auto& e : expect.items())
      run.checks.push_back(compare(run, index, name, e.key(), e.value().get<std::string>()));
    if (step.contains("expect_int")) check_int(run, index, name, step, result);
  } catch (Error& e) {
    throw e.with("function", name);
  }
}

json read_case(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kNotFound, "cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.contains("steps") || !j["steps"].is_array())
    throw Error(path + " is not a case file with a \"steps\" list");
  return j;
}

// The forward functions: the first called after the create call is the prefill, the next
// other one the decode (the prefill's when the steps call no other).
void forward_functions(const json& steps, graphrt::LanguageModelOptions* options) {
  std::vector<std::string> calls;
  for (const json& s : steps)
    if (s.contains("call")) calls.push_back(s["call"].get<std::string>());
  if (calls.size() < 2) throw Error("the steps call no forward function after the KV cache's create function");
  options->prefill = options->decode = calls[1];
  for (size_t i = 2; i < calls.size(); ++i)
    if (calls[i] != calls[1]) {
      options->decode = calls[i];
      break;
    }
}

}  // namespace

std::vector<StepCheck> run_relax_steps(const graphrt::Model& model, const std::string& case_path, double tolerance) {
  const json c = read_case(case_path);
  StepsRun run;
  const size_t slash = case_path.find_last_of('/');
  run.dir = slash == std::string::npos ? "." : case_path.substr(0, slash);
  run.model = &model;
  run.tolerance = tolerance;
  forward_functions(c["steps"], &run.options);
  for (size_t i = 0; i < c["steps"].size(); ++i) {
    try {
      run_step(run, i, c["steps"][i]);
    } catch (Error& e) {
      throw e.with("step", std::to_string(i));
    } catch (const std::exception& e) {  // a malformed step (nlohmann::json's errors)
      throw Error("step " + std::to_string(i) + ": " + e.what());
    }
  }
  return run.checks;
}

}  // namespace graphrt_apps
