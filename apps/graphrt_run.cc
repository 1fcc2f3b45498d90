// graphrt-run: runs a TVM-exported model (one-file factory .so, or kernels .so + graph JSON +
// params) on given or random inputs; prints/saves outputs, latency and per-node profiles.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include "common/args.h"
#include "common/model.h"
#include "common/output_file.h"
#include "common/relax_model.h"
#include "common/npy.h"
#include "graphrt/device_api.h"
#include "graphrt/runtime.h"
#include "graphrt/float16.h"

using namespace graphrt_apps;
using graphrt::Error;
using graphrt::operator!=;

namespace {

const char* kUsage =
    "usage: graphrt-run MODEL.so [--graph G.json [--params P.params]] [--input NAME=FILE.npy ...]\n"
    "                   [--function NAME (Relax executables; default main)]\n"
    "                   [--random-inputs SEED] [--output-dir DIR] [--device cpu|cuda[:N]] [--threads N]\n"
    "                   [--repeat N] [--warmup N] [--profile [--trace FILE.json]]\n"
    "                   [--memory-plan auto|tvm|liveness] [--cuda-graph] [--loader dlopen|elf] [--trust-exports]\n"
    "                   [--quiet]\n"
    "  --trust-exports  load a library without TVM markers (hand-written kernels) and call its\n"
    "                   exported functions as TVM packed functions\n";

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// "data inputs: a, b; params: p0, p1, ..." for the inputs a user may give.
std::string describe_inputs(const std::vector<std::string>& names) {
  std::vector<std::string> data, params;
  for (const std::string& n : names) (graphrt::is_tvm_param_name(n) ? params : data).push_back(n);
  std::string s = "data inputs: " + (data.empty() ? std::string("none") : join(data));
  if (!params.empty())
    s += "; params: " + params.front() + (params.size() > 1 ? " ... " + params.back() : "") + " (" +
         std::to_string(params.size()) + ", loaded with --params)";
  return s;
}

void fill_random(graphrt::NDArray& host, std::mt19937_64& rng) {
  DLDataType t = host.dtype();
  int64_t n = graphrt::shape_numel(host.shape().data(), static_cast<int>(host.shape().size())) * t.lanes;
  void* p = host->data;
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  for (int64_t i = 0; i < n; ++i) {
    if (t.code == kDLFloat && t.bits == 32) {
      static_cast<float*>(p)[i] = static_cast<float>(real(rng));
    } else if (t.code == kDLFloat && t.bits == 64) {
      static_cast<double*>(p)[i] = real(rng);
    } else if (t.code == kDLFloat && t.bits == 16) {
      static_cast<uint16_t*>(p)[i] = graphrt::float16_from_double(real(rng));
    } else if (t.code == kDLBfloat && t.bits == 16) {
      static_cast<uint16_t*>(p)[i] = graphrt::bfloat16_from_double(real(rng));
    } else if ((t.code == kDLInt || t.code == kDLUInt) && t.bits == 1) {
      static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(small(rng) & 1);
    } else if (t.code == kDLInt || t.code == kDLUInt) {
      int64_t v = small(rng);
      std::memcpy(static_cast<char*>(p) + i * (t.bits / 8), &v, t.bits / 8);  // little-endian
    } else {
      throw Error("--random-inputs cannot fill dtype " + graphrt::dtype_to_string(t));
    }
  }
}

std::string preview(const graphrt::NDArray& host, int count) {
  DLDataType t = host.dtype();
  int64_t n = graphrt::shape_numel(host.shape().data(), static_cast<int>(host.shape().size())) * t.lanes;
  std::ostringstream os;
  os << "[";
  const char* p = static_cast<const char*>(host->data);
  for (int64_t i = 0; i < std::min<int64_t>(n, count); ++i) {
    if (i) os << ", ";
    if (t.code == kDLFloat && t.bits == 32) {
      os << static_cast<const float*>(static_cast<const void*>(p))[i];
    } else if (t.code == kDLFloat && t.bits == 64) {
      os << static_cast<const double*>(static_cast<const void*>(p))[i];
    } else if ((t.code == kDLFloat || t.code == kDLBfloat) && t.bits == 16) {
      uint16_t bits;
      std::memcpy(&bits, p + i * 2, 2);
      os << (t.code == kDLFloat ? graphrt::float16_to_float(bits) : graphrt::bfloat16_to_float(bits));
    } else if ((t.code == kDLInt || t.code == kDLUInt) && t.bits <= 64 && t.bits % 8 == 0) {
      int64_t v = 0;
      std::memcpy(&v, p + i * (t.bits / 8), t.bits / 8);
      if (t.code == kDLInt && t.bits < 64 && (v >> (t.bits - 1)) & 1) v -= int64_t(1) << t.bits;
      os << v;
    } else if (t.bits == 1 || t.bits == 8) {
      os << static_cast<int>(static_cast<const uint8_t*>(static_cast<const void*>(p))[i]);
    } else {
      os << "?";
    }
  }
  if (n > count) os << ", ... (" << n << " values)";
  os << "]";
  return os.str();
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  double pos = q * (v.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

void sync(DLDevice dev) {
  if (dev.device_type != kDLCPU) graphrt::device_api(dev)->synchronize(dev, nullptr);
}

// The outputs of a run, printed and (with --output-dir) written as output_<i>.npy.
void write_outputs(const std::vector<graphrt::NDArray>& outputs, const std::string& out_dir, bool quiet) {
  if (!out_dir.empty()) {
    struct stat st;
    if (stat(out_dir.c_str(), &st) != 0 && mkdir(out_dir.c_str(), 0755) != 0)
      throw Error("cannot create output directory").with("dir", out_dir);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    graphrt::NDArray host = outputs[i].copy_to_device(DLDevice{kDLCPU, 0});
    if (!quiet)
      std::cout << "output " << i << ": " << graphrt::shape_to_string(host.shape()) << " "
                << graphrt::dtype_to_string(host.dtype()) << " " << preview(host, 8) << "\n";
    if (!out_dir.empty()) {
      std::string path = out_dir + "/output_" + std::to_string(i) + ".npy";
      write_npy(path, host.dtype(), host.shape(), host->data, host.nbytes());
    }
  }
  if (!out_dir.empty() && !quiet) std::cout << "wrote " << outputs.size() << " output(s) to " << out_dir << "\n";
}

void print_latency(std::vector<double> ms, int repeat, int warmup) {
  double mean = 0;
  for (double v : ms) mean += v;
  mean /= ms.size();
  std::printf("latency over %d runs (%d warm-up): mean %.4f ms, p50 %.4f ms, p90 %.4f ms, min %.4f ms, max %.4f ms\n",
              repeat, warmup, mean, percentile(ms, 0.5), percentile(ms, 0.9), *std::min_element(ms.begin(), ms.end()),
              *std::max_element(ms.begin(), ms.end()));
}

// Random inputs for the parameters not given, shaped as the function's code checks them: a
// symbolic dimension takes its size from a given input that has it, else 1.
void fill_relax_inputs(const RelaxFunction& fn, std::vector<graphrt::NDArray>& inputs, long long seed, bool quiet) {
  std::map<int64_t, int64_t> symbols;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const RelaxParamSignature& s = fn.params[i];
    if (!inputs[i].defined() || !s.known || inputs[i].shape().size() != s.dims.size()) continue;
    for (size_t d = 0; d < s.dims.size(); ++d)
      if (s.symbols[d] >= 0) symbols.emplace(s.symbols[d], inputs[i].shape()[d]);
  }
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined()) continue;
    const RelaxParamSignature& s = fn.params[i];
    const std::string& name = fn.param_names[i];
    if (!s.known)
      throw Error("input '" + name + "' of " + fn.name + " has no dtype and shape in the executable (its code checks " +
                  s.text + "): give it with --input " + name + "=FILE.npy");
    std::vector<int64_t> shape;
    for (size_t d = 0; d < s.dims.size(); ++d) {
      if (s.dims[d] >= 0) {
        shape.push_back(s.dims[d]);
      } else {
        auto it = symbols.find(s.symbols[d]);
        shape.push_back(it != symbols.end() ? it->second : 1);
      }
    }
    inputs[i] = graphrt::NDArray::empty(shape, s.dtype, DLDevice{kDLCPU, 0});
    fill_random(inputs[i], rng);
    if (!quiet)
      std::cout << "input " << name << ": random " << graphrt::shape_to_string(shape) << " "
                << graphrt::dtype_to_string(s.dtype) << " (seed " << seed << "; the code checks " << s.text << ")\n";
  }
}

// A Relax executable: its function called with the --input arrays in parameter order; a tuple
// result is written flattened depth-first, as TVM's output_<i>.npy are.
int run_relax(const Model& model, const std::vector<std::pair<std::string, std::string>>& given, const Args& args,
              DLDevice dev) {
  for (const char* flag : {"--memory-plan", "--cuda-graph"})
    if (args.has(flag)) throw UsageError(std::string(flag) + " does not apply to Relax executables");
  if (dev.device_type != kDLCPU) throw UsageError("Relax executables run on the CPU only");
  RelaxFunction fn = open_relax_function(model.root, args.get("--function"));
  std::vector<graphrt::NDArray> inputs(fn.param_names.size());
  for (const auto& kv : given) {
    auto it = std::find(fn.param_names.begin(), fn.param_names.end(), kv.first);
    if (it == fn.param_names.end())
      throw Error("unknown input '" + kv.first + "' (" + fn.name + " takes " + join(fn.param_names) + ")");
    auto& slot = inputs[static_cast<size_t>(it - fn.param_names.begin())];
    if (slot.defined()) throw UsageError("input '" + kv.first + "' given twice");
    NpyArray a = read_npy(kv.second);
    slot = graphrt::NDArray::empty(a.shape, a.dtype, DLDevice{kDLCPU, 0});
    slot.copy_from_bytes(a.data.data(), a.data.size());
  }
  const bool quiet = args.has("--quiet");
  const long long seed = args.get_int("--random-inputs", -1, 0, (1LL << 62));
  if (seed >= 0) fill_relax_inputs(fn, inputs, seed, quiet);
  graphrt::ArgList call_args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      throw Error("input '" + fn.param_names[i] + "' not given (use --input " + fn.param_names[i] +
                  "=FILE.npy or --random-inputs SEED)");
    call_args.add_ndarray(inputs[i]);
  }
  graphrt::PackedFunc f = fn.vm->require_function(fn.name);
  const int repeat = static_cast<int>(args.get_int("--repeat", 0, 0, 1000000));
  const int warmup = static_cast<int>(args.get_int("--warmup", repeat > 0 ? 1 : 0, 0, 1000000));
  for (int i = 0; i < warmup; ++i) graphrt::call_function(f, call_args);
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    graphrt::call_function(f, call_args);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (repeat > 0) print_latency(ms, repeat, warmup);
  std::string structure;
  const std::vector<graphrt::NDArray> outputs = flatten_relax_result(graphrt::call_function(f, call_args), &structure);
  if (!quiet) std::cout << fn.name << " returned " << structure << "\n";
  write_outputs(outputs, args.get("--output-dir"), quiet);
  if (args.has("--profile")) {
    graphrt::ArgList profile_args;
    profile_args.add_string(fn.name);
    for (const auto& a : inputs) profile_args.add_ndarray(a);
    std::cout << graphrt::call_function(fn.vm->require_function("profile"), profile_args).as_string();
    if (args.has("--trace")) {
      const std::string path = args.get("--trace");
      write_output_file(path, graphrt::call_function(fn.vm->require_function("trace"), profile_args).as_string(),
                        "trace file");
      if (!quiet) std::cout << "wrote Chrome trace to " << path << "\n";
    }
  }
  return 0;
}

int run(int argc, char** argv) {
  Args args({{"--graph", true},         {"--params", true},     {"--input", true, true}, {"--random-inputs", true},
             {"--output-dir", true},    {"--device", true},     {"--threads", true},     {"--repeat", true},
             {"--warmup", true},        {"--profile", false},   {"--trace", true},       {"--memory-plan", true},
             {"--cuda-graph", false},   {"--loader", true},     {"--quiet", false},      {"--help", false},
             {"-h", false},             {"--trust-exports", false}, {"--function", true}});
  args.parse(argc, argv);
  if (args.has("--help") || args.has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty() ? "no MODEL given" : "expected one MODEL, got " +
                                                                     std::to_string(args.positional().size()) +
                                                                     " (" + join(args.positional()) + ")");
  const graphrt::LoadOptions load_options = load_options_from_args(args);
  std::string plan = args.get("--memory-plan");
  if (args.has("--memory-plan")) check_memory_plan_option(plan);
  if (args.has("--trace") && !args.has("--profile")) throw UsageError("--trace needs --profile");
  int repeat = static_cast<int>(args.get_int("--repeat", 0, 0, 1000000));
  int warmup = static_cast<int>(args.get_int("--warmup", repeat > 0 ? 1 : 0, 0, 1000000));
  int threads = static_cast<int>(args.get_int("--threads", 0, 0, 4096));
  bool quiet = args.has("--quiet");
  long long seed = args.get_int("--random-inputs", -1, 0, (1LL << 62));
  DLDevice dev = parse_device(args.get("--device", "cpu"));

  // Inputs given on the command line, parsed before anything runs.
  std::vector<std::pair<std::string, std::string>> given;
  for (const std::string& spec : args.all("--input")) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--input expects NAME=FILE.npy, got '" + spec + "'");
    given.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
  }
  std::string out_dir = args.get("--output-dir");

  if (threads > 0) graphrt::set_num_threads(threads);
  require_device(dev);
  Model model = load_model(args.positional()[0], load_options, args.get("--graph"), args.get("--params"));
  if (model.is_relax) return run_relax(model, given, args, dev);
  if (args.has("--function")) throw UsageError("--function applies to Relax executables; this model is a graph");
  auto ex = make_executor(model, dev, plan, args.has("--cuda-graph"));

  // Inputs to provide: graph inputs minus bound params.
  std::set<std::string> params(model.param_names.begin(), model.param_names.end());
  std::vector<graphrt::TensorInfo> needed;
  std::vector<std::string> needed_names;
  for (const auto& info : ex->input_info()) {
    if (params.count(info.name)) continue;
    needed.push_back(info);
    needed_names.push_back(info.name);
  }
  std::set<std::string> set_names;
  for (const auto& kv : given) {
    const std::string& name = kv.first;
    int index = ex->input_index(name);
    if (index < 0) throw Error("unknown input '" + name + "' (" + describe_inputs(needed_names) + ")");
    if (set_names.count(name)) throw UsageError("input '" + name + "' given twice");
    NpyArray a = read_npy(kv.second);
    graphrt::NDArray cur = ex->get_input(index);
    std::vector<int64_t> want(cur.shape().begin(), cur.shape().end());
    if (!npy_dtype_fits(a.dtype, cur.dtype()))
      throw Error("input '" + name + "' has dtype " + graphrt::dtype_to_string(a.dtype) + ", the model expects " +
                  graphrt::dtype_to_string(cur.dtype()))
          .with("file", kv.second);
    if (a.shape != want)
      throw Error("input '" + name + "' has shape " + graphrt::shape_to_string(a.shape) + ", the model expects " +
                  graphrt::shape_to_string(want))
          .with("file", kv.second);
    graphrt::NDArray host = graphrt::NDArray::empty(want, cur.dtype(), DLDevice{kDLCPU, 0});
    host.copy_from_bytes(a.data.data(), a.data.size());
    ex->set_input(index, host.handle());
    set_names.insert(name);
  }
  // Params are weights, not inputs: never filled with random numbers, and their advice differs.
  std::vector<std::string> missing_params;
  for (const auto& info : needed)
    if (!set_names.count(info.name) && graphrt::is_tvm_param_name(info.name)) missing_params.push_back(info.name);
  if (!missing_params.empty()) {
    std::string names = missing_params.size() <= 6 ? join(missing_params)
                                                   : join(std::vector<std::string>(missing_params.begin(),
                                                                                   missing_params.begin() + 5)) +
                                                         ", ... " + missing_params.back();
    if (model.three_file && model.params_bytes.empty())
      throw Error("the graph's params are not loaded (" + std::to_string(missing_params.size()) + ": " + names +
                  "): pass the params file with --params, e.g. --params deploy_params.params");
    throw Error("the model's params lack " + names + " (" + std::to_string(missing_params.size()) +
                "), which the graph reads; they are weights, not inputs, so --random-inputs does not fill them");
  }
  std::mt19937_64 rng(static_cast<uint64_t>(seed < 0 ? 0 : seed));
  for (const auto& info : needed) {
    if (set_names.count(info.name)) continue;
    if (seed < 0)
      throw Error("input '" + info.name + "' not given (use --input " + info.name +
                  "=FILE.npy or --random-inputs SEED)");
    graphrt::NDArray host = graphrt::NDArray::empty(info.shape, info.dtype, DLDevice{kDLCPU, 0});
    fill_random(host, rng);
    ex->set_input(info.name, host.handle());
    if (!quiet)
      std::cout << "input " << info.name << ": random " << graphrt::shape_to_string(info.shape) << " "
                << graphrt::dtype_to_string(info.dtype) << " (seed " << seed << ")\n";
  }

  for (int i = 0; i < warmup; ++i) ex->run();
  if (repeat > 0) {
    std::vector<double> ms;
    ms.reserve(repeat);
    for (int i = 0; i < repeat; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      ex->run();
      sync(dev);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    print_latency(ms, repeat, warmup);
  } else if (warmup == 0) {
    ex->run();
    sync(dev);
  }

  std::vector<graphrt::NDArray> outputs;
  for (int i = 0; i < ex->num_outputs(); ++i) outputs.push_back(ex->get_output(i));
  write_outputs(outputs, out_dir, quiet);

  if (args.has("--profile")) {
    graphrt::ProfileReport report = ex->profile(std::max(1, repeat), std::max(1, warmup));
    std::cout << report.table();
    if (args.has("--trace")) {
      std::string path = args.get("--trace");
      write_output_file(path, report.chrome_trace(), "trace file");
      if (!quiet) std::cout << "wrote Chrome trace to " << path << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-run", run, argc, argv); }
