// graphrt-run: runs a TVM-exported model (one-file factory .so, or kernels .so + graph JSON +
// params) on given or random inputs; prints/saves outputs, latency and per-node profiles.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/args.h"
#include "common/expected_output.h"
#include "common/language_model_run.h"
#include "common/npz.h"
#include "common/model.h"
#include "common/output_file.h"
#include "common/relax_function.h"
#include "common/relax_steps.h"
#include "common/npy.h"
#include "graphrt/json_writer.h"
#include "graphrt/run_deadline.h"
#include "graphrt/device_api.h"
#include "graphrt/runtime.h"
#include "graphrt/float16.h"

using namespace graphrt_apps;
using graphrt::Error;
using graphrt::operator!=;

namespace {

const AppHelp kHelp = {
    "graphrt-run", "MODEL [options]",
    "Runs a model exported by TVM: a one-file export_library .so or .tar (graph or Relax), the\n"
    "kernels library of a three-file export with --graph/--params, or a tvmc package (module.tar).\n"
    "Prints each output's shape, dtype and first values; writes outputs, latency and profiles on request.\n"
    "Exit status: 0 ok, 1 error (or an output that differs from --expected-output), 2 usage mistake.",
    "  graphrt-run deploy.so --input data=input.npy --output-dir out/\n"
    "  graphrt-run deploy.so --random-inputs 0 --repeat 100 --json > summary.json\n"
    "  graphrt-run deploy.so --input data=input.npy --expected-output 0=tvm_output_0.npy --tolerance 1e-5\n"
    "  graphrt-run deploy_lib.so --graph deploy_graph.json --params deploy_params.params --inputs inputs.npz\n"
    "  graphrt-run module.tar --inputs inputs.npz --output-dir out/ --output-format npz   # tvmc package\n"
    "  graphrt-run dist/tiny_gpt2_chat --generate \"Once upon a time,\" --max-tokens 16 --temperature 0   # MLC-LLM folder\n"};

const std::vector<FlagSpec> kFlags = {
    {"--graph", true, false, "G.json",
     "graph JSON of a three-file export; MODEL is then its kernels library (default: none, MODEL holds the graph)"},
    {"--params", true, false, "P.params", "params file of a three-file export (needs --graph; default: none)"},
    {"--input", true, true, "NAME=FILE.npy", "sets input NAME from an .npy file (default: none)"},
    {"--inputs", true, false, "FILE.npz",
     "sets the inputs from an .npz archive, one array per input name (np.savez, tvmc's format; default: none)"},
    {"--random-inputs", true, false, "SEED",
     "fills the inputs not given with random values from SEED (graph models and Relax functions; a symbolic dimension "
     "takes its size from a given input, else 1; default: off, every input must be given)"},
    {"--save-inputs", true, false, "FILE.npz",
     "writes the inputs of the run (given and random) to an .npz archive, so the run can be repeated with --inputs "
     "(default: off)"},
    {"--output-dir", true, false, "DIR",
     "writes the outputs into DIR, created if absent and checked before the model runs (default: none, outputs are only "
     "printed)"},
    {"--output-format", true, false, "npy|npz",
     "npy: DIR/output_<i>.npy; npz: one DIR/outputs.npz holding output_0, output_1, ... as tvmc writes (default: npy)"},
    {"--expected-output", true, true, "I=FILE.npy",
     "compares output I with an .npy file: prints 'matches', or the max difference and the first differing index and "
     "exits 1 (default: none)"},
    {"--tolerance", true, false, "T",
     "largest absolute difference --expected-output accepts (default: 0, values must be equal)"},
    {"--json", false, false, "",
     "prints one JSON summary on stdout (model, load time, latency stats with p99 and throughput, peak memory, outputs' "
     "shapes, dtypes and checksums); the human-readable text goes to stderr (default: off)"},
    {"--function", true, false, "NAME", "function of a Relax executable to call (default: main, or the only function when there is one)"},
    {"--steps", true, false, "CASE.json",
     "runs a Relax executable step by step as the case file's \"steps\" say (a language model with its KV cache: "
     "create it, add a sequence, prefill, decode ...), comparing each expected output within --tolerance; prints one "
     "line per comparison and exits 1 when one differs (default: none)"},
    {"--device", true, false, "cpu|cuda[:N]|vulkan[:N]|opencl[:N]", "device to run on (default: cpu)"},
    {"--threads", true, false, "N", "threads of the kernel thread pool (default: TVM_NUM_THREADS, else the number of cores)"},
    {"--repeat", true, false, "N", "times the model runs, timed: prints mean, p50, p90, p99, min, max latency (default: 0, one untimed run)"},
    {"--warmup", true, false, "N", "untimed runs before the timed ones (default: 1 with --repeat, else 0)"},
    {"--profile", false, false, "", "prints a per-node (graph) or per-call (Relax) time table (default: off)"},
    {"--trace", true, false, "FILE.json", "with --profile, writes a Chrome trace of the profiled run (default: none)"},
    {"--memory-plan", true, false, "auto|tvm|liveness",
     "how a graph's intermediate tensors share memory (default: auto, or GRAPHRT_MEMORY_PLAN)"},
    {"--cuda-graph", false, false, "", "on CUDA, captures the whole graph once and replays it (default: off)"},
    {"--loader", true, false, "dlopen|elf", "how MODEL is loaded: dlopen, or graphrt's own ELF loader (default: dlopen)"},
    {"--trust-exports", false, false, "",
     "loads a library without TVM markers (hand-written kernels) and calls its exported functions as TVM packed "
     "functions (default: off, such a library is refused)"},
    {"--quiet", false, false, "",
     "prints nothing but errors, --json and the --profile table: no outputs, matches, latency or files written "
     "(default: off)"},
    {"--timeout", true, false, "SECONDS",
     "limit on the runs (all of them, from the end of the load): a graph stops between nodes, a Relax VM "
     "before its next call, with an error and exit 1 (default: none)"},
};

// The human-readable text: stdout, or stderr when --json takes stdout. requested() is what a flag
// asked to see (--profile's table, --steps' failures), printed with --quiet too; human() is
// the rest, which --quiet silences.
std::ostream* g_report = &std::cout;
std::ostream* g_human = &std::cout;
std::ostream g_silent(nullptr);  // no buffer: discards what it is given
std::ostream& human() { return *g_human; }
std::ostream& requested() { return *g_report; }

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

std::string fnv1a64(const void* data, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// Creates --output-dir when absent, before the model loads, so a run never ends in an unwritable place.
void prepare_output_dir(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw Error("output directory exists and is not a directory").with("dir", dir);
  } else if (mkdir(dir.c_str(), 0755) != 0) {
    const int err = errno;
    throw Error(Error::kind_of_errno(err), std::string("cannot create output directory: ") + std::strerror(err) +
                                              (err == ENOENT ? " (its parent directory does not exist)" : ""))
        .with("dir", dir);
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    throw Error(Error::kind_of_errno(err), std::string("cannot write into output directory: ") + std::strerror(err))
        .with("dir", dir);
  }
}

double peak_rss_bytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

void sync(DLDevice dev) {
  if (dev.device_type != kDLCPU) graphrt::device_api(dev)->synchronize(dev, nullptr);
}

// `dir/name` with one slash, whether or not the user's folder ends in one ("out/" -> "out/x.npy").
std::string in_folder(const std::string& dir, const std::string& name) {
  return !dir.empty() && dir.back() == '/' ? dir + name : dir + "/" + name;
}

// The outputs of a run, printed and (with --output-dir) written as output_<i>.npy or outputs.npz.
void write_outputs(const std::vector<graphrt::NDArray>& outputs, const std::string& out_dir, const std::string& format,
                   bool quiet, graphrt::JsonWriter& report) {
  std::vector<NpzEntry> npz;
  for (size_t i = 0; i < outputs.size(); ++i) {
    graphrt::NDArray host = outputs[i].copy_to_device(DLDevice{kDLCPU, 0});
    if (!quiet)
      human() << "output " << i << ": " << graphrt::shape_to_string(host.shape()) << " "
              << graphrt::dtype_to_string(host.dtype()) << " " << preview(host, 8) << "\n";
    double sum = 0;
    for (int64_t k = 0, n = value_count(host); k < n; ++k) sum += element_as_double(host, k);
    report.begin_object().key("index").unsigned_integer(i).key("shape").begin_array();
    for (const int64_t d : host.shape()) report.integer(d);
    report.end_array().key("dtype").string(graphrt::dtype_to_string(host.dtype())).key("sum").number(sum);
    report.key("fnv1a64").string(fnv1a64(host->data, host.nbytes())).end_object();
    if (out_dir.empty()) continue;
    const std::string name = "output_" + std::to_string(i);
    if (format == "npz")
      npz.push_back({name, encode_npy(host.dtype(), host.shape(), host->data, host.nbytes())});
    else
      write_npy(in_folder(out_dir, name + ".npy"), host.dtype(), host.shape(), host->data, host.nbytes());
  }
  if (out_dir.empty()) return;
  if (format == "npz") write_npz(in_folder(out_dir, "outputs.npz"), npz);
  if (!quiet)
    human() << "wrote " << outputs.size() << " output(s) to "
            << (format == "npz" ? in_folder(out_dir, "outputs.npz") : out_dir) << "\n";
}

// The latency figures, printed and written as the report's member "latency".
void latency_report(std::vector<double> ms, int repeat, int warmup, graphrt::JsonWriter& report) {
  double mean = 0;
  for (double v : ms) mean += v;
  mean /= ms.size();
  char line[300];
  std::snprintf(line, sizeof line,
                "latency over %d runs (%d warm-up): mean %.4f ms, p50 %.4f ms, p90 %.4f ms, p99 %.4f ms, min %.4f ms, "
                "max %.4f ms, %.1f runs/s",
                repeat, warmup, mean, percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 0.99),
                *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
                mean > 0 ? 1000.0 / mean : 0.0);
  human() << line << "\n";
  report.key("latency").begin_object().key("runs").integer(repeat).key("warmup").integer(warmup);
  report.key("mean_ms").number(mean).key("p50_ms").number(percentile(ms, 0.5));
  report.key("p90_ms").number(percentile(ms, 0.9)).key("p99_ms").number(percentile(ms, 0.99));
  report.key("min_ms").number(*std::min_element(ms.begin(), ms.end()));
  report.key("max_ms").number(*std::max_element(ms.begin(), ms.end()));
  report.key("throughput_per_s").number(mean > 0 ? 1000.0 / mean : 0.0).end_object();
}

// What every run ends with: outputs written, compared with --expected-output, the --json
// summary printed. Returns the exit status. `report` is the summary's object, open, its
// members so far written (model, device, format, load_ms, latency).
int finish(const std::vector<graphrt::NDArray>& outputs, const Args& args, const std::vector<ExpectedOutput>& expected,
           graphrt::JsonWriter& report) {
  report.key("outputs").begin_array();
  write_outputs(outputs, args.get("--output-dir"), args.get("--output-format", "npy"), args.has("--quiet"), report);
  report.end_array();
  bool ok = true;
  if (!expected.empty()) {
    report.key("expected").begin_array();
    const double tolerance = args.get_double("--tolerance", 0.0, 0.0, 1e300);
    for (const ExpectedOutputResult& r : check_expected_outputs(outputs, expected, tolerance)) {
      report.begin_object().key("output").unsigned_integer(r.output).key("file").string(r.file);
      report.key("tolerance").number(tolerance).key("matches").boolean(r.matches);
      report.key("max_difference").number(r.max_difference);
      if (r.first_differing_index >= 0) report.key("first_differing_index").integer(r.first_differing_index);
      if (r.matches) {
        human() << "output " << r.output << " matches " << r.file << " (max difference "
                << number_text(r.max_difference) << ", tolerance " << number_text(tolerance) << ")\n";
      } else {
        std::cerr << "graphrt-run: " << r.problem << "\n";
        report.key("problem").string(r.problem);
        ok = false;
      }
      report.end_object();
    }
    report.end_array();
  }
  report.key("peak_rss_bytes").integer(static_cast<int64_t>(peak_rss_bytes())).end_object();
  if (args.has("--json")) std::cout << report.text() << "\n";
  return ok ? 0 : 1;
}

// The inputs given by --input NAME=FILE.npy and --inputs FILE.npz, read once the model has loaded.
struct GivenInput {
  std::string name, file;
  NpyArray array;
};

std::vector<GivenInput> read_given_inputs(const Args& args) {
  std::vector<GivenInput> given;
  for (const std::string& spec : args.all("--input")) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--input expects NAME=FILE.npy, got '" + spec + "'");
    given.push_back({spec.substr(0, eq), spec.substr(eq + 1), read_npy(spec.substr(eq + 1))});
  }
  if (args.has("--inputs")) {
    const std::string path = args.get("--inputs");
    const size_t eq = path.find('=');
    struct stat st;
    if (eq != std::string::npos && stat(path.c_str(), &st) != 0)
      throw UsageError("--inputs takes one .npz file of every input; for one input from a .npy file use --input " +
                       path);
    for (auto& kv : read_npz(path)) given.push_back({kv.first, path, std::move(kv.second)});
  }
  return given;
}

void save_inputs(const std::string& path, const std::vector<std::pair<std::string, graphrt::NDArray>>& inputs) {
  std::vector<NpzEntry> entries;
  for (const auto& kv : inputs)
    entries.push_back({kv.first, encode_npy(kv.second.dtype(), kv.second.shape(), kv.second->data, kv.second.nbytes())});
  write_npz(path, entries);
  human() << "wrote " << inputs.size() << " input(s) to " << path << "\n";
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
      human() << "input " << name << ": random " << graphrt::shape_to_string(shape) << " "
              << graphrt::dtype_to_string(s.dtype) << " (seed " << seed << "; the code checks " << s.text << ")\n";
  }
}

// A Relax executable: its function called with the --input arrays in parameter order; a tuple
// result is written flattened depth-first, as TVM's output_<i>.npy are.
int run_relax(const ModelFile& model, const std::vector<GivenInput>& given, const std::vector<ExpectedOutput>& expected,
              const Args& args, DLDevice dev, graphrt::JsonWriter& report,
              std::chrono::steady_clock::time_point load_start) {
  for (const char* flag : {"--memory-plan", "--cuda-graph"})
    if (args.has(flag)) throw UsageError(std::string(flag) + " does not apply to Relax executables");
  RelaxFunction fn = open_relax_function(model.root, args.get("--function"), dev);
  report.key("format").string("relax").key("function").string(fn.name);
  report.key("load_ms").number(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count());
  std::vector<graphrt::NDArray> inputs(fn.param_names.size());
  for (const GivenInput& in : given) {
    auto it = std::find(fn.param_names.begin(), fn.param_names.end(), in.name);
    if (it == fn.param_names.end())
      throw Error("unknown input '" + in.name + "' (" + fn.name + " takes " + join(fn.param_names) + ")")
          .with("file", in.file);
    auto& slot = inputs[static_cast<size_t>(it - fn.param_names.begin())];
    if (slot.defined()) throw UsageError("input '" + in.name + "' given twice");
    slot = graphrt::NDArray::empty(in.array.shape, in.array.dtype, DLDevice{kDLCPU, 0});
    slot.copy_from_bytes(in.array.data.data(), in.array.data.size());
  }
  const bool quiet = args.has("--quiet");
  const long long seed = args.get_int("--random-inputs", -1, 0, (1LL << 62));
  if (seed >= 0) fill_relax_inputs(fn, inputs, seed, quiet);
  // The run goes through the session layer's Runner (its inputs copied to the model's device).
  graphrt::Session session(graphrt::runtime(), dev);
  std::unique_ptr<graphrt::Runner> runner =
      session.open(model.root, {model.path, "", "", ""})->runner(fn.name);
  std::vector<std::pair<std::string, graphrt::NDArray>> used;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      throw Error("input '" + fn.param_names[i] + "' not given (use --input " + fn.param_names[i] +
                  "=FILE.npy or --random-inputs SEED)");
    used.emplace_back(fn.param_names[i], inputs[i]);
    runner->set_input(fn.param_names[i], inputs[i].handle());
  }
  if (args.has("--save-inputs")) save_inputs(args.get("--save-inputs"), used);
  const int repeat = static_cast<int>(args.get_int("--repeat", 0, 0, 1000000));
  const int warmup = static_cast<int>(args.get_int("--warmup", repeat > 0 ? 1 : 0, 0, 1000000));
  for (int i = 0; i < warmup; ++i) runner->run();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    runner->run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (repeat > 0) latency_report(ms, repeat, warmup, report);
  runner->run();
  std::string structure;
  std::vector<graphrt::NDArray> outputs = flatten_relax_result(runner->result(), &structure);
  for (graphrt::NDArray& o : outputs)
    if (o.device().device_type != kDLCPU) o = o.copy_to_device(DLDevice{kDLCPU, 0});
  if (!quiet) human() << fn.name << " returned " << structure << "\n";
  if (args.has("--profile") || args.has("--trace")) {
    const graphrt::RunProfile profile = runner->profile(1, 0);
    if (args.has("--profile")) requested() << profile.table;
    if (args.has("--trace")) {
      const std::string path = args.get("--trace");
      write_output_file(path, profile.chrome_trace, "trace file");
      if (!quiet) human() << "wrote Chrome trace to " << path << "\n";
    }
  }
  return finish(outputs, args, expected, report);
}

// --steps: the case file's script, replayed on the session layer's LanguageModel on `dev`,
// each expected output's comparison printed.
int run_steps(const ModelFile& model, const Args& args, DLDevice dev) {
  if (!model.is_relax) throw UsageError("--steps applies to Relax executables; this model is a graph");
  const double tolerance = args.get_double("--tolerance", 0.0, 0.0, 1e300);
  const std::shared_ptr<graphrt::Model> lm_model =
      graphrt::Session(graphrt::runtime(), dev).open(model.root, graphrt::ModelSource{model.path, "", "", ""});
  const std::vector<StepCheck> checks = run_relax_steps(*lm_model, args.get("--steps"), tolerance);
  size_t failed = 0;
  for (const StepCheck& c : checks) {
    if (!c.matches) ++failed;
    (c.matches ? human() : requested()) << (c.matches ? "ok   " : "FAIL ") << "step " << c.step << ": " << c.what
            << (!c.matches ? ": " + c.problem
                : c.bit_exact ? std::string(" (bit-exact)")
                : c.tensor    ? " (max difference " + number_text(c.max_difference) + ")"
                              : std::string())
            << "\n";
  }
  (failed ? requested() : human()) << checks.size() - failed << " matched, " << failed << " differ\n";
  return failed ? 1 : 0;
}

// The flag table: the model runner's, then the language-model mode's.
std::vector<FlagSpec> all_flags() {
  std::vector<FlagSpec> flags = kFlags;
  for (const FlagSpec& f : language_model_flags()) flags.push_back(f);
  return flags;
}

int run(int argc, char** argv) {
  Args args(kHelp, all_flags());
  if (!args.parse(argc, argv)) return 0;
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty() ? "no MODEL given" : "expected one MODEL, got " +
                                                                     std::to_string(args.positional().size()) +
                                                                     " (" + join(args.positional()) + ")");
  if (wants_language_model(args)) {
    const DLDevice lm_device = parse_device(args.get("--device", "cpu"));
    require_device(lm_device);
    return run_language_model(args, lm_device, std::cout, std::cerr);
  }
  if (args.has("--json")) g_report = g_human = &std::cerr;
  if (args.has("--quiet")) g_human = &g_silent;
  const graphrt::LoadOptions load_options = load_options_from_args(args);
  std::string plan = args.get("--memory-plan");
  if (args.has("--memory-plan")) check_memory_plan_option(plan);
  if (args.has("--trace") && !args.has("--profile")) throw UsageError("--trace needs --profile");
  const std::string format = args.get("--output-format", "npy");
  if (format != "npy" && format != "npz") throw UsageError("--output-format expects npy or npz, got '" + format + "'");
  if (args.has("--output-format") && !args.has("--output-dir")) throw UsageError("--output-format needs --output-dir");
  if (args.has("--tolerance") && !args.has("--expected-output") && !args.has("--steps"))
    throw UsageError("--tolerance needs --expected-output or --steps");
  args.get_double("--tolerance", 0.0, 0.0, 1e300);
  int repeat = static_cast<int>(args.get_int("--repeat", 0, 0, 1000000));
  int warmup = static_cast<int>(args.get_int("--warmup", repeat > 0 ? 1 : 0, 0, 1000000));
  int threads = static_cast<int>(args.get_int("--threads", 0, 0, 4096));
  bool quiet = args.has("--quiet");
  long long seed = args.get_int("--random-inputs", -1, 0, (1LL << 62));
  DLDevice dev = parse_device(args.get("--device", "cpu"));

  // The output directory is made (or refused) before the model loads, so a run never ends
  // with nowhere to write.
  std::string out_dir = args.get("--output-dir");
  if (!out_dir.empty()) prepare_output_dir(out_dir);

  if (threads > 0) graphrt::set_num_threads(threads);
  require_device(dev);
  const std::string model_path = args.positional()[0];
  // The --json summary, written member by member as the run goes (finish() closes it).
  graphrt::JsonWriter report;
  report.begin_object().key("model").string(model_path).key("device").string(args.get("--device", "cpu"));
  auto load_start = std::chrono::steady_clock::now();
  ModelFile model = load_model(model_path, load_options, args.get("--graph"), args.get("--params"));
  // Then the files the run reads: a model that cannot load is reported before them. Reading
  // them is not part of the load time.
  const auto read_start = std::chrono::steady_clock::now();
  const std::vector<GivenInput> given = read_given_inputs(args);
  const std::vector<ExpectedOutput> expected = read_expected_outputs(args.all("--expected-output"));
  load_start += std::chrono::steady_clock::now() - read_start;
  // --timeout: every run below checks the deadline (graphrt/run_deadline.h).
  std::unique_ptr<graphrt::RunDeadlineScope> deadline;
  if (args.has("--timeout"))
    deadline = std::make_unique<graphrt::RunDeadlineScope>(
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(args.get_double("--timeout", 0.0, 1e-6, 1e9))));
  if (args.has("--steps")) return run_steps(model, args, dev);
  if (model.is_relax) return run_relax(model, given, expected, args, dev, report, load_start);
  if (args.has("--function")) throw UsageError("--function applies to Relax executables; this model is a graph");
  std::unique_ptr<graphrt::Runner> runner = make_runner(model, dev, plan, args.has("--cuda-graph"));
  report.key("format").string(model.three_file ? "graph (three-file)" : "graph");
  report.key("load_ms").number(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count());

  // Inputs to provide: the function's (the graph's inputs minus bound params).
  const std::vector<graphrt::TensorSpec>& needed = runner->function().inputs;
  std::vector<std::string> needed_names;
  for (const auto& info : needed) needed_names.push_back(info.name);
  std::set<std::string> set_names;
  std::map<std::string, graphrt::NDArray> used;
  for (const GivenInput& in : given) {
    const std::string& name = in.name;
    auto spec = std::find_if(needed.begin(), needed.end(), [&](const graphrt::TensorSpec& t) { return t.name == name; });
    if (spec == needed.end())
      throw Error("unknown input '" + name + "' (" + describe_inputs(needed_names) + ")").with("file", in.file);
    if (set_names.count(name)) throw UsageError("input '" + name + "' given twice");
    const NpyArray& a = in.array;
    const std::vector<int64_t>& want = spec->shape;
    if (!npy_dtype_fits(a.dtype, spec->dtype))
      throw Error("input '" + name + "' has dtype " + graphrt::dtype_to_string(a.dtype) + ", the model expects " +
                  graphrt::dtype_to_string(spec->dtype))
          .with("file", in.file);
    if (a.shape != want)
      throw Error("input '" + name + "' has shape " + graphrt::shape_to_string(a.shape) + ", the model expects " +
                  graphrt::shape_to_string(want))
          .with("file", in.file);
    graphrt::NDArray host = graphrt::NDArray::empty(want, spec->dtype, DLDevice{kDLCPU, 0});
    host.copy_from_bytes(a.data.data(), a.data.size());
    runner->set_input(name, host.handle());
    set_names.insert(name);
    used[name] = host;
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
    if (model.three_file && model.params_path.empty())
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
                  "=FILE.npy, --inputs FILE.npz or --random-inputs SEED)");
    graphrt::NDArray host = graphrt::NDArray::empty(info.shape, info.dtype, DLDevice{kDLCPU, 0});
    fill_random(host, rng);
    runner->set_input(info.name, host.handle());
    used[info.name] = host;
    if (!quiet)
      human() << "input " << info.name << ": random " << graphrt::shape_to_string(info.shape) << " "
              << graphrt::dtype_to_string(info.dtype) << " (seed " << seed << ")\n";
  }
  if (args.has("--save-inputs")) {
    std::vector<std::pair<std::string, graphrt::NDArray>> in_order;
    for (const auto& info : needed)
      if (used.count(info.name)) in_order.emplace_back(info.name, used[info.name]);
    save_inputs(args.get("--save-inputs"), in_order);
  }

  for (int i = 0; i < warmup; ++i) runner->run();
  if (repeat > 0) {
    std::vector<double> ms;
    ms.reserve(repeat);
    for (int i = 0; i < repeat; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      runner->run();
      sync(dev);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    latency_report(ms, repeat, warmup, report);
  } else if (warmup == 0) {
    runner->run();
    sync(dev);
  }

  std::vector<graphrt::NDArray> outputs;
  for (int i = 0; i < runner->num_outputs(); ++i) outputs.push_back(runner->output(i));

  if (args.has("--profile")) {
    const graphrt::RunProfile profile = runner->profile(std::max(1, repeat), std::max(1, warmup));
    requested() << profile.table;
    if (args.has("--trace")) {
      std::string path = args.get("--trace");
      write_output_file(path, profile.chrome_trace, "trace file");
      if (!quiet) human() << "wrote Chrome trace to " << path << "\n";
    }
  }
  return finish(outputs, args, expected, report);
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-run", run, argc, argv); }
