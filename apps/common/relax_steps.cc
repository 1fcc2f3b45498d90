#include "common/relax_steps.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>


#include "common/expected_output.h"
#include "common/npy.h"
#include "graphrt/error.h"
#include "graphrt/json_reader.h"
#include "graphrt/language_model.h"

namespace graphrt_apps {

namespace {

using graphrt::Error;
using graphrt::JsonReader;
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

// A case file's step, read and checked before any runs (check_step's forms).
struct Arg {
  enum class Kind { kName, kInt, kShape, kFile } kind = Kind::kName;
  std::string text;            // a name, or a file
  int64_t value = 0;           // {"int": n}
  std::vector<int64_t> shape;  // {"shape": [...]}
  std::string shown;           // as written, quoted and cut, for messages
};

struct Step {
  bool is_call = false;
  std::string name;  // the call's or the global's
  bool has_args = false;
  std::vector<Arg> args;
  bool result_is_name = false;       // "result": "x"
  std::vector<std::string> results;  // "result": "x" or ["x", ...]
  std::vector<std::pair<std::string, std::string>> expect;  // name, file
  bool has_expect_int = false;
  int64_t expect_int = 0;
  std::string shown;
};

// A case file nests a few levels in its steps; the other members it carries (the fixture's
// description) are skipped, so the depth only bounds what skipping them costs.
constexpr graphrt::JsonLimits kCaseJsonLimits{size_t(64) << 20, 64};

std::string shown_text(std::string_view text) { return graphrt::quote_untrusted(std::string(text), 80); }

// A JSON integer as it is: a fraction (0.5), a float (5.0), a string or a number past int64 is
// refused, never truncated or narrowed.
int64_t exact_int(JsonReader& r, const std::string& field) {
  int64_t v = 0;
  if (r.read_integer(&v)) return v;
  const std::string text = r.raw_value();
  const bool integer_text = !text.empty() && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9')) &&
                            text.find_first_of(".eE") == std::string::npos;
  if (integer_text && text[0] != '-')
    throw Error(ErrorKind::kOutOfRange, field + " is past int64: " + shown_text(text)).with("field", field);
  throw Error(field + " must be an integer, not " + shown_text(text)).with("field", field);
}

std::string arg_field(size_t i, const char* key) { return "args[" + std::to_string(i) + "]." + key; }

[[noreturn]] void bad_argument(size_t i, const std::string& shown) {
  throw Error("argument " + std::to_string(i) + " must be a name, {\"int\": n}, {\"shape\": [...]} or "
              "{\"file\": x.npy}: " + shown).with("field", "args[" + std::to_string(i) + "]");
}

// Every argument's form, before any step runs: a name, {"int": n}, {"shape": [n, ...]} with
// dimensions not negative, or {"file": "x.npy"}.
Arg read_argument(JsonReader& r, std::string_view text, size_t i) {
  Arg a;
  const size_t start = (r.peek(), r.offset());
  if (r.next_is_string()) {
    a.text = r.read_string();
    a.shown = shown_text(text.substr(start, r.offset() - start));
    return a;
  }
  if (!r.next_is_object()) {
    r.skip_value();
    bad_argument(i, shown_text(text.substr(start, r.offset() - start)));
  }
  size_t members = 0;
  bool known = false;
  r.object_unique_keys([&](std::string_view key) {
    if (++members == 1 && key == "int") {
      a.kind = Arg::Kind::kInt;
      a.value = exact_int(r, arg_field(i, "int"));
      known = true;
    } else if (members == 1 && key == "shape") {
      a.kind = Arg::Kind::kShape;
      const std::string field = arg_field(i, "shape");
      if (!r.next_is_array()) {
        const size_t at = r.offset();
        r.skip_value();
        throw Error(field + " must be a list of integers: " + shown_text(text.substr(at, r.offset() - at)))
            .with("field", field);
      }
      r.array([&](size_t d) {
        const std::string dim = field + "[" + std::to_string(d) + "]";
        a.shape.push_back(exact_int(r, dim));
        if (a.shape.back() < 0) throw Error(dim + " is negative: " + std::to_string(a.shape.back())).with("field", dim);
      });
      known = true;
    } else if (members == 1 && key == "file" && r.next_is_string()) {
      a.kind = Arg::Kind::kFile;
      a.text = r.read_string();
      known = true;
    } else {
      r.skip_value();
    }
  });
  a.shown = shown_text(text.substr(start, r.offset() - start));
  if (members != 1 || !known) bad_argument(i, a.shown);
  return a;
}

std::vector<std::string> read_names(JsonReader& r, std::string_view text, const char* field, bool* is_name) {
  const size_t start = (r.peek(), r.offset());
  std::vector<std::string> names;
  *is_name = r.next_is_string();
  if (*is_name) {
    names.push_back(r.read_string());
    return names;
  }
  bool ok = r.next_is_array();
  if (ok)
    r.array([&](size_t) {
      if (ok && r.next_is_string()) {
        names.push_back(r.read_string());
      } else {
        ok = false;
        r.skip_value();
      }
    });
  else
    r.skip_value();
  if (!ok)
    throw Error(std::string(field) + " must be a name or a list of names: " +
                shown_text(text.substr(start, r.offset() - start))).with("field", field);
  return names;
}

void read_expect(JsonReader& r, std::string_view text, Step* step) {
  const size_t start = (r.peek(), r.offset());
  if (!r.next_is_object()) {
    r.skip_value();
    throw Error("expect must map names to files: " + shown_text(text.substr(start, r.offset() - start)))
        .with("field", "expect");
  }
  r.object_unique_keys([&](std::string_view key) {
    if (!r.next_is_string()) {
      const size_t at = r.offset();
      const std::string name(key);  // the key's storage may not outlive the next read
      r.skip_value();
      throw Error("expect." + graphrt::shown_name(name) + " must name a file: " +
                  shown_text(text.substr(at, r.offset() - at))).with("field", "expect");
    }
    std::string name(key);
    step->expect.emplace_back(std::move(name), r.read_string());
  });
}

Step read_step(JsonReader& r, std::string_view text) {
  Step step;
  const size_t start = (r.peek(), r.offset());
  if (!r.next_is_object()) {
    r.skip_value();
    throw Error("a step must be an object: " + shown_text(text.substr(start, r.offset() - start)));
  }
  int named = 0;           // "call" and "global" members seen
  bool name_ok = true;     // each of them a string
  const char* what = "call";
  r.object_unique_keys([&](std::string_view key) {
    if (key == "call" || key == "global") {
      ++named;
      step.is_call = key == "call";
      what = step.is_call ? "call" : "global";
      if (r.next_is_string()) step.name = r.read_string(); else name_ok = false, r.skip_value();
    } else if (key == "args") {
      step.has_args = true;
      if (!r.next_is_array()) {
        const size_t at = r.offset();
        r.skip_value();
        throw Error("args must be a list: " + shown_text(text.substr(at, r.offset() - at))).with("field", "args");
      }
      r.array([&](size_t i) { step.args.push_back(read_argument(r, text, i)); });
    } else if (key == "result") {
      step.results = read_names(r, text, "result", &step.result_is_name);
    } else if (key == "expect") {
      read_expect(r, text, &step);
    } else if (key == "expect_int") {
      step.has_expect_int = true;
      step.expect_int = exact_int(r, "expect_int");
    } else {
      r.skip_value();
    }
  });
  step.shown = shown_text(text.substr(start, r.offset() - start));
  if (named != 1) throw Error("a step names one \"call\" or one \"global\": " + step.shown);
  if (!name_ok) throw Error(std::string(what) + " must be a name: " + step.shown).with("field", what);
  return step;
}

const Arg& arg(const Step& step, size_t i) {
  if (step.args.size() <= i) throw Error("the step has no argument " + std::to_string(i));
  return step.args[i];
}

int64_t int_argument(const Arg& a, size_t i) {
  if (a.kind != Arg::Kind::kInt) throw Error("argument " + std::to_string(i) + " must be {\"int\": n}: " + a.shown);
  return a.value;
}

// A {"shape": [v]} argument of one value: a forward pass is of one sequence.
int64_t one_value_shape(const Arg& a, size_t i) {
  if (a.kind != Arg::Kind::kShape || a.shape.size() != 1)
    throw Error(ErrorKind::kUnsupported, "argument " + std::to_string(i) +
                                             " must be {\"shape\": [v]}: a forward pass of one sequence (" + a.shown + ")");
  return a.shape[0];
}

// Argument 0 of a builtin: the create call's result.
void require_cache(const StepsRun& run, const Step& step) {
  if (!run.lm) throw Error(ErrorKind::kFailedPrecondition, "no KV cache yet (the first call step creates it)");
  const Arg& a = arg(step, 0);
  if (a.kind != Arg::Kind::kName || a.text != run.cache)
    throw Error("argument 0 must name the KV cache (" + graphrt::quote_untrusted(run.cache) + "): " + a.shown);
}

std::vector<int32_t> token_file(const StepsRun& run, const Arg& a) {
  if (a.kind != Arg::Kind::kFile) throw Error("the token ids must be {\"file\": x.npy}: " + a.shown);
  const std::string& file = a.text;
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
void create_cache(StepsRun& run, const Step& step) {
  run.options.create_cache = step.name;
  run.options.max_batch_size = one_value_shape(arg(step, 0), 0);
  run.options.max_total_seq_len = one_value_shape(arg(step, 1), 1);
  run.options.prefill_chunk_size = one_value_shape(arg(step, 2), 2);
  run.options.page_size = one_value_shape(arg(step, 3), 3);
  if (one_value_shape(arg(step, 4), 4) != 0)
    throw Error(ErrorKind::kUnsupported, "argument 4 (support_sliding_window) is not 0: graphrt's cache has no sliding windows");
  if (!step.result_is_name) throw Error("the create call must name its result");
  run.cache = step.results[0];
  run.lm = std::make_unique<graphrt::LanguageModel>(*run.model, run.options);
}

// A forward function's call inside kv_state_begin_forward / end_forward.
void forward(StepsRun& run, const std::string& name, const Step& step) {
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
  // A result named alone is not bound: the logits are a call's first result of a list.
  if (!step.result_is_name && !step.results.empty()) run.tensors[step.results[0]] = logits;
}

int64_t run_builtin(StepsRun& run, Builtin b, const Step& step) {
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

void check_int(StepsRun& run, size_t index, const std::string& name, const Step& step, int64_t got) {
  StepCheck c;
  c.step = index;
  const int64_t want = step.expect_int;
  c.what = name + " = " + std::to_string(got) + " (expected " + std::to_string(want) + ")";
  c.matches = got == want;
  if (!c.matches) c.problem = "got " + std::to_string(got);
  run.checks.push_back(c);
}

void run_step(StepsRun& run, size_t index, const Step& step) {
  const bool is_call = step.is_call;
  const std::string& name = step.name;
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
    for (const auto& e : step.expect) run.checks.push_back(compare(run, index, name, e.first, e.second));
    if (step.has_expect_int) check_int(run, index, name, step, result);
  } catch (Error& e) {
    throw e.with("function", name);
  }
}

// The case file's steps, each of the form check_step says.
std::vector<Step> parse_case(const std::string& text, const std::string& origin) {
  std::vector<Step> steps;
  bool has_steps = false;
  try {
    JsonReader r(text, kCaseJsonLimits, "the case file");
    if (!r.next_is_object()) throw Error(origin + " is not a case file with a \"steps\" list");
    r.object_unique_keys([&](std::string_view key) {
      if (key != "steps") return r.skip_value();
      if (!r.next_is_array()) throw Error(origin + " is not a case file with a \"steps\" list");
      has_steps = true;
      r.array([&](size_t i) {
        try {
          steps.push_back(read_step(r, text));
        } catch (Error& e) {
          throw e.with("step", std::to_string(i));
        }
      });
    });
    r.expect_end();
  } catch (Error& e) {
    throw e.with("file", origin);
  }
  if (!has_steps) throw Error(origin + " is not a case file with a \"steps\" list").with("file", origin);
  return steps;
}

std::vector<Step> read_case(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::kNotFound, "cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_case(text.str(), path);
}

// The forward functions: the first called after the create call is the prefill, the next
// other one the decode (the prefill's when the steps call no other).
void forward_functions(const std::vector<Step>& steps, graphrt::LanguageModelOptions* options) {
  std::vector<std::string> calls;
  for (const Step& s : steps)
    if (s.is_call) calls.push_back(s.name);
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
  return parse_case(text, origin).size();
}

std::vector<StepCheck> run_relax_steps(const graphrt::Model& model, const std::string& case_path, double tolerance) {
  const std::vector<Step> steps = read_case(case_path);
  StepsRun run;
  const size_t slash = case_path.find_last_of('/');
  run.dir = slash == std::string::npos ? "." : case_path.substr(0, slash);
  run.model = &model;
  run.tolerance = tolerance;
  forward_functions(steps, &run.options);
  for (size_t i = 0; i < steps.size(); ++i) {
    try {
      run_step(run, i, steps[i]);
    } catch (Error& e) {
      throw e.with("step", std::to_string(i));
    }
  }
  return run.checks;
}

}  // namespace graphrt_apps
