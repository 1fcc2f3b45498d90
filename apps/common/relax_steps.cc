#include "common/relax_steps.h"

#include <cstring>
#include <fstream>
#include <limits>
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

// Whether `v` nests at most `levels` deep: what a message may print (json::dump recurses).
bool shallow(const json& v, int levels) {
  if (!v.is_structured()) return true;
  if (levels == 0) return false;
  for (const json& child : v)
    if (!shallow(child, levels - 1)) return false;
  return true;
}

// A value of the file as a message shows it.
std::string shown(const json& v) {
  return shallow(v, 8) ? graphrt::quote_untrusted(v.dump(), 80) : std::string("(a value nested more than 8 deep)");
}

// A JSON integer as it is: a fraction (0.5), a float (5.0), a string or a number past int64 is
// refused, never truncated or narrowed.
int64_t exact_int(const json& v, const std::string& field) {
  if (!v.is_number_integer())
    throw Error(field + " must be an integer, not " + shown(v)).with("field", field);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw Error(ErrorKind::kOutOfRange, field + " is past int64: " + shown(v)).with("field", field);
  return v.get<int64_t>();
}

std::string arg_field(size_t i, const char* key) { return "args[" + std::to_string(i) + "]." + key; }

const json& arg(const json& step, size_t i) {
  const json& args = step.at("args");
  if (!args.is_array() || args.size() <= i) throw Error("the step has no argument " + std::to_string(i));
  return args[i];
}

int64_t int_argument(const json& a, size_t i) {
  if (!a.is_object() || !a.contains("int"))
    throw Error("argument " + std::to_string(i) + " must be {\"int\": n}: " + shown(a));
  return exact_int(a["int"], arg_field(i, "int"));
}

// A {"shape": [v]} argument of one value: a forward pass is of one sequence.
int64_t one_value_shape(const json& a, size_t i) {
  if (!a.is_object() || !a.contains("shape") || !a["shape"].is_array() || a["shape"].size() != 1)
    throw Error(ErrorKind::kUnsupported, "argument " + std::to_string(i) +
                                             " must be {\"shape\": [v]}: a forward pass of one sequence (" + shown(a) + ")");
  return exact_int(a["shape"][0], arg_field(i, "shape[0]"));
}

// Every argument's form, before any step runs: a name, {"int": n}, {"shape": [n, ...]} with
// dimensions not negative, or {"file": "x.npy"}.
void check_argument(const json& a, size_t i) {
  if (a.is_string()) return;
  if (!a.is_object() || a.size() != 1)
    throw Error("argument " + std::to_string(i) + " must be a name, {\"int\": n}, {\"shape\": [...]} or "
                "{\"file\": x.npy}: " + shown(a)).with("field", "args[" + std::to_string(i) + "]");
  if (a.contains("int")) {
    exact_int(a["int"], arg_field(i, "int"));
  } else if (a.contains("shape")) {
    const std::string field = arg_field(i, "shape");
    if (!a["shape"].is_array()) throw Error(field + " must be a list of integers: " + shown(a)).with("field", field);
    for (size_t d = 0; d < a["shape"].size(); ++d) {
      const std::string dim = field + "[" + std::to_string(d) + "]";
      if (exact_int(a["shape"][d], dim) < 0)
        throw Error(dim + " is negative: " + shown(a)).with("field", dim);
    }
  } else if (!a.contains("file") || !a["file"].is_string()) {
    throw Error("argument " + std::to_string(i) + " must be a name, {\"int\": n}, {\"shape\": [...]} or "
                "{\"file\": x.npy}: " + shown(a)).with("field", "args[" + std::to_string(i) + "]");
  }
}

void check_names(const json& v, const char* field) {
  if (v.is_string()) return;
  bool names = v.is_array();
  for (size_t i = 0; names && i < v.size(); ++i) names = v[i].is_string();
  if (!names) throw Error(std::string(field) + " must be a name or a list of names: " + shown(v)).with("field", field);
}

void check_step(const json& step) {
  if (!step.is_object()) throw Error("a step must be an object: " + shown(step));
  const bool is_call = step.contains("call");
  if (is_call == step.contains("global")) throw Error("a step names one \"call\" or one \"global\": " + shown(step));
  const char* what = is_call ? "call" : "global";
  if (!step[what].is_string()) throw Error(std::string(what) + " must be a name: " + shown(step)).with("field", what);
  if (step.contains("args")) {
    if (!step["args"].is_array()) throw Error("args must be a list: " + shown(step)).with("field", "args");
    for (size_t i = 0; i < step["args"].size(); ++i) check_argument(step["args"][i], i);
  }
  if (step.contains("result")) check_names(step["result"], "result");
  if (step.contains("expect")) {
    const json& e = step["expect"];
    if (!e.is_object()) throw Error("expect must map names to files: " + shown(e)).with("field", "expect");
    for (const auto& item : e.items())
      if (!item.value().is_string())
        throw Error("expect." + graphrt::shown_name(item.key()) + " must name a file: " + shown(item.value()))
            .with("field", "expect");
  }
  if (step.contains("expect_int")) exact_int(step["expect_int"], "expect_int");
}

// Argument 0 of a builtin: the create call's result.
void require_cache(const StepsRun& run, const json& step) {
  if (!run.lm) throw Error(ErrorKind::kFailedPrecondition, "no KV cache yet (the first call step creates it)");
  const json& a = arg(step, 0);
  if (!a.is_string() || a.get<std::string>() != run.cache)
    throw Error("argument 0 must name the KV cache (" + graphrt::quote_untrusted(run.cache) + "): " + shown(a));
}

std::vector<int32_t> token_file(const StepsRun& run, const json& a) {
  if (!a.is_object() || !a.contains("file")) throw Error("the token ids must be {\"file\": x.npy}: " + shown(a));
  const std::string file = a["file"].get<std::string>();
  const NpyArray ids = read_npy(run.dir + "/" + file);
  const int64_t n = ids.numel();
  std::vector<int32_t> out(static_cast<size_t>(n));
  // A token id is an int32 at least 0 (what the model's embedding takes): an int64 past that
  // range is refused, never narrowed to another token.
  const auto refuse = [&](size_t i, int64_t id) {
    return Error(ErrorKind::kOutOfRange, graphrt::quote_untrusted(file) + " holds token id " + std::to_string(id) + " at " +
                                             std::to_string(i) + ": not a token id (0 to 2^31-1)")
        .with("file", file);
  };
  if (ids.dtype.code == kDLInt && ids.dtype.bits == 32) {
    std::memcpy(out.data(), ids.data.data(), out.size() * sizeof(int32_t));
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i] < 0) throw refuse(i, out[i]);
  } else if (ids.dtype.code == kDLInt && ids.dtype.bits == 64) {
    std::vector<int64_t> wide(out.size());
    std::memcpy(wide.data(), ids.data.data(), wide.size() * sizeof(int64_t));
    for (size_t i = 0; i < wide.size(); ++i) {
      if (wide[i] < 0 || wide[i] > std::numeric_limits<int32_t>::max()) throw refuse(i, wide[i]);
      out[i] = static_cast<int32_t>(wide[i]);
    }
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
  if (it == run.tensors.end()) throw Error("the step gives no logits named " + graphrt::quote_untrusted(name));
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
  const int64_t want = exact_int(step["expect_int"], "expect_int");
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

// The case file's text as a document whose every step has the form check_step says.
json parse_case(const std::string& text, const std::string& origin) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("steps") || !j["steps"].is_array())
    throw Error(origin + " is not a case file with a \"steps\" list").with("file", origin);
  for (size_t i = 0; i < j["steps"].size(); ++i) {
    try {
      check_step(j["steps"][i]);
    } catch (Error& e) {
      throw e.with("step", std::to_string(i)).with("file", origin);
    }
  }
  return j;
}

json read_case(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kNotFound, "cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_case(text.str(), path);
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

size_t check_relax_steps(const std::string& text, const std::string& origin) {
  return parse_case(text, origin)["steps"].size();
}

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
