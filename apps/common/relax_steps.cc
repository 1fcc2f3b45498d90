#include "common/relax_steps.h"

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/expected_output.h"
#include "common/npy.h"
#include "common/packed_args.h"
#include "common/relax_model.h"
#include "graphrt/error.h"

namespace graphrt_apps {

namespace {

using json = nlohmann::json;
using graphrt::Error;
using graphrt::RetValue;

struct StepsRun {
  std::string dir;
  std::shared_ptr<graphrt::RelaxVM> vm;
  std::map<std::string, RetValue> values;
  double tolerance = 0;
  std::vector<StepCheck> checks;
};

graphrt::NDArray npy_tensor(const std::string& path) {
  const NpyArray a = read_npy(path);
  graphrt::NDArray t = graphrt::NDArray::empty(a.shape, a.dtype, graphrt::cpu());
  if (!a.data.empty()) t.copy_from_bytes(a.data.data(), a.data.size());
  return t;
}

RetValue shape_value(const json& dims) {
  std::vector<RetValue> args;
  for (const json& d : dims) args.push_back(int_arg(d.get<int64_t>()));
  return call_packed(global_function("runtime.ShapeTuple"), args);
}

RetValue argument(StepsRun& run, const json& a) {
  if (a.is_string()) {
    auto it = run.values.find(a.get<std::string>());
    if (it == run.values.end()) throw Error("no earlier step's result is named '" + a.get<std::string>() + "'");
    return it->second;
  }
  if (a.contains("int")) return int_arg(a["int"].get<int64_t>());
  if (a.contains("shape")) return shape_value(a["shape"]);
  if (a.contains("file")) return ndarray_arg(npy_tensor(run.dir + "/" + a["file"].get<std::string>()));
  throw Error("an argument must be a result's name, {\"int\"}, {\"shape\"} or {\"file\"}: " + a.dump());
}

RetValue tuple_item(const RetValue& tuple, int64_t i) {
  return call_packed(global_function("runtime.ArrayGetItem"), {tuple, int_arg(i)});
}

void bind_results(StepsRun& run, const json& step, const RetValue& result) {
  if (!step.contains("result")) return;
  const json& names = step["result"];
  if (names.is_string()) {
    run.values[names.get<std::string>()] = result;
    return;
  }
  for (size_t i = 0; i < names.size(); ++i) run.values[names[i].get<std::string>()] = tuple_item(result, static_cast<int64_t>(i));
}

StepCheck compare(StepsRun& run, size_t index, const std::string& step_name, const std::string& name,
                  const std::string& file) {
  StepCheck c;
  c.step = index;
  c.what = step_name + " -> " + name + " vs " + file;
  c.tensor = true;
  const graphrt::NDArray got = run.values.at(name).as_ndarray().copy_to_device(graphrt::cpu());
  ExpectedOutput expected{0, file, read_npy(run.dir + "/" + file)};
  const ExpectedOutputResult r = check_expected_outputs({got}, {expected}, run.tolerance).at(0);
  c.matches = r.matches;
  c.max_difference = r.max_difference;
  c.problem = r.problem;
  c.bit_exact = r.matches && got.nbytes() == expected.array.data.size() &&
                std::memcmp(got->data, expected.array.data.data(), got.nbytes()) == 0;
  return c;
}

void run_step(StepsRun& run, size_t index, const json& step) {
  std::vector<RetValue> args;
  const json given = step.value("args", json::array());
  for (const json& a : given) args.push_back(argument(run, a));
  const bool is_call = step.contains("call");
  const std::string name = is_call ? step["call"].get<std::string>() : step.at("global").get<std::string>();
  const RetValue result =
      call_packed(is_call ? run.vm->function(name) : global_function(name), args);
  bind_results(run, step, result);
  const json expect = step.value("expect", json::object());  // kept: items() refers into it
  for (const auto& e : expect.items())
    run.checks.push_back(compare(run, index, name, e.key(), e.value().get<std::string>()));
  if (step.contains("expect_int")) {
    StepCheck c;
    c.step = index;
    const int64_t want = step["expect_int"].get<int64_t>();
    const int64_t got = result.as_int();
    c.what = name + " = " + std::to_string(got) + " (expected " + std::to_string(want) + ")";
    c.matches = got == want;
    if (!c.matches) c.problem = "got " + std::to_string(got);
    run.checks.push_back(c);
  }
}

json read_case(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(graphrt::ErrorKind::kNotFound, "cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.contains("steps") || !j["steps"].is_array())
    throw Error(path + " is not a case file with a \"steps\" list");
  return j;
}

std::string first_call(const json& steps) {
  for (const json& s : steps)
    if (s.contains("call")) return s["call"].get<std::string>();
  throw Error("the steps call no VM function");
}

}  // namespace

std::vector<StepCheck> run_relax_steps(const graphrt::Module& root, const std::string& case_path, double tolerance) {
  const json c = read_case(case_path);
  StepsRun run;
  const size_t slash = case_path.find_last_of('/');
  run.dir = slash == std::string::npos ? "." : case_path.substr(0, slash);
  run.tolerance = tolerance;
  run.vm = open_relax_function(root, first_call(c["steps"])).relax;
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
