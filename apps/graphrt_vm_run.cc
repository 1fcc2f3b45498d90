// graphrt-vm-run: runs one function of VM modules from the command line, in
// the manner of IREE's iree-run-module.
//
//   graphrt-vm-run --module=FILE.vmbc|FILE.vmasm|LIB.so@create?k=v [--module=...]
//                  --function=NAME [--input=VALUE ...] [--output=@FILE.npy ...]
//                  [--budget=N] [--trace] [--benchmark=N]
//
// Modules are linked in order after the built-in `tensor` and `tvm` modules;
// NAME is "module.function" or a function of the last module. Inputs follow
// the function's signature: scalars as `i32=5`, `f32=1.5` (or a bare number),
// tensors as `2x3xf32=1,2,3,4,5,6` (one value splats, none zero-fills) or
// `@file.npy`. Results print as IREE prints them ("result[0]: i32=5"; a
// list as "vm.list" and one "child_list[i]: ..." line per element).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/args.h"
#include "common/npy.h"
#include "common/packed_args.h"
#include "graphrt/error.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"
#include "graphrt/object.h"
#include "graphrt/packed_func.h"
#include "graphrt/vm.h"

namespace {

using graphrt::Error;
using graphrt::RetValue;
using graphrt_apps::UsageError;
using graphrt_apps::call_packed;

const graphrt_apps::AppHelp kHelp = {
    "graphrt-vm-run", "--module=FILE [--module=...] --function=NAME [options]",
    "Calls one function of graphrt's VM modules, as IREE's iree-run-module does, and prints its results.\n"
    "Modules are .vmbc, .vmasm or native LIB.so[@create][?k=v] modules, linked in order after the\n"
    "built-in tensor and tvm modules. Ctrl-C stops the call cleanly.",
    "  graphrt-vm-run --module=demo.vmasm --function=add --input=i32=5 --input=37\n"
    "  graphrt-vm-run --module=demo.vmasm --function=ident --input=2x2xf32=1,2,3,4 --output=@out.npy\n"
    "  graphrt-vm-run --module=demo.vmasm --function=add --input=1 --input=2 --benchmark=100\n"};

const std::vector<graphrt_apps::FlagSpec> kFlags = {
    {"--module", true, true, "FILE", "a module to link: .vmbc, .vmasm or LIB.so[@create][?k=v] (required, at least one)"},
    {"--function", true, false, "NAME", "the function to call, NAME or module.NAME (required; without it the exports are listed)"},
    {"--input", true, true, "VALUE",
     "one argument, in order: i32=5 | f32=1.5 | 5 | 2x3xf32=1,2,3,4,5,6 | 4xi32=7 (splat) | @file.npy (default: none)"},
    {"--output", true, true, "@FILE.npy|-", "one per result, in order: @file.npy writes it, - prints it (default: -)"},
    {"--budget", true, false, "N", "branches + calls the call may execute (default: GRAPHRT_VM_BUDGET, else 100000000)"},
    {"--memory-limit", true, false, "BYTES",
     "bytes all VM buffers and tensors may hold together (default: GRAPHRT_VM_MEMORY_LIMIT, else 536870912)"},
    {"--trace", false, false, "", "prints every executed instruction to stderr (default: off)"},
    {"--benchmark", true, false, "N", "runs the call N more times and prints timings (default: 0)"},
};

// ---- element types by IREE-style name.
struct DTypeName {
  const char* name;
  DLDataType dtype;
};
const DTypeName kDTypes[] = {
    {"i8", {kDLInt, 8, 1}},    {"i16", {kDLInt, 16, 1}},   {"i32", {kDLInt, 32, 1}},  {"i64", {kDLInt, 64, 1}},
    {"u8", {kDLUInt, 8, 1}},   {"u16", {kDLUInt, 16, 1}},  {"u32", {kDLUInt, 32, 1}}, {"u64", {kDLUInt, 64, 1}},
    {"f32", {kDLFloat, 32, 1}}, {"f64", {kDLFloat, 64, 1}},
};

bool dtype_by_name(const std::string& name, DLDataType* out) {
  for (const DTypeName& d : kDTypes) {
    if (name == d.name) {
      *out = d.dtype;
      return true;
    }
  }
  return false;
}

std::string dtype_name(DLDataType t) {
  for (const DTypeName& d : kDTypes) {
    if (d.dtype.code == t.code && d.dtype.bits == t.bits && d.dtype.lanes == t.lanes) return d.name;
  }
  return "dtype(" + std::to_string(t.code) + "," + std::to_string(t.bits) + ")";
}

int64_t element_count(const graphrt::NDArray& t) {
  int64_t n = 1;
  for (int64_t d : t.shape()) n *= d;
  return n;
}

void* element(const graphrt::NDArray& t, int64_t i) {
  return static_cast<char*>(t->data) + t->byte_offset + i * ((t.dtype().bits + 7) / 8);
}

// ---- numbers.
double parse_number(const std::string& text, const std::string& input) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw UsageError("input '" + input + "': '" + text + "' is not a number");
  return v;
}

int64_t parse_integer(const std::string& text, const std::string& input) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used, 0);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw UsageError("input '" + input + "': '" + text + "' is not an integer");
  return v;
}

std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '[' || c == ']') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

void store_element(const graphrt::NDArray& t, int64_t i, const std::string& text, const std::string& input) {
  void* p = element(t, i);
  const DLDataType d = t.dtype();
  if (d.code == kDLFloat) {
    const double v = parse_number(text, input);
    if (d.bits == 32) {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &v, 8);
    }
    return;
  }
  const int64_t v = parse_integer(text, input);
  std::memcpy(p, &v, static_cast<size_t>(d.bits / 8));  // little-endian truncation
}

// ---- inputs, as arguments of the VM function's packed call.
graphrt::NDArray new_tensor(const std::vector<int64_t>& shape, DLDataType dtype) {
  graphrt::NDArray t = graphrt::NDArray::empty(shape, dtype, DLDevice{kDLCPU, 0});
  if (t.nbytes()) std::memset(element(t, 0), 0, t.nbytes());
  return t;
}

graphrt::NDArray tensor_from_npy(const std::string& path) {
  const graphrt_apps::NpyArray a = graphrt_apps::read_npy(path);
  graphrt::NDArray t = new_tensor(a.shape, a.dtype);
  if (!a.data.empty()) t.copy_from_bytes(a.data.data(), a.data.size());
  return t;
}

// "2x3xf32=1,2,3" / "f32=1.5" / "2x3xf32": shape, dtype and value texts.
struct TypedText {
  std::vector<int64_t> shape;
  DLDataType dtype{};
  bool has_values = false;
  std::vector<std::string> values;
};

bool parse_typed(const std::string& input, TypedText* out) {
  const size_t eq = input.find('=');
  const std::string type = input.substr(0, eq);
  std::vector<std::string> parts;
  std::stringstream ss(type);
  for (std::string p; std::getline(ss, p, 'x');) parts.push_back(p);
  if (parts.empty() || !dtype_by_name(parts.back(), &out->dtype)) return false;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const int64_t dim = parse_integer(parts[i], input);
    if (dim < 0) throw UsageError("input '" + input + "': negative dimension");
    out->shape.push_back(dim);
  }
  out->has_values = eq != std::string::npos;
  if (out->has_values) out->values = split_values(input.substr(eq + 1));
  return true;
}

graphrt::NDArray tensor_from_text(const std::string& input, const TypedText& typed) {
  graphrt::NDArray t = new_tensor(typed.shape, typed.dtype);
  const int64_t n = element_count(t);
  if (!typed.has_values) return t;  // zero-filled
  const size_t count = typed.values.size();
  if (count != 1 && count != static_cast<size_t>(n)) {
    throw UsageError("input '" + input + "': " + std::to_string(count) + " values for " + std::to_string(n) +
                     " elements");
  }
  for (int64_t i = 0; i < n; ++i) store_element(t, i, typed.values[count == 1 ? 0 : static_cast<size_t>(i)], input);
  return t;
}

// `type` is the argument's cconv letter (VmApi::argument_types).
RetValue scalar_from_text(const std::string& input, char type) {
  std::string text = input;
  TypedText typed;
  if (parse_typed(input, &typed)) {
    if (!typed.shape.empty() || typed.values.size() != 1) {
      throw UsageError("input '" + input + "': the function takes a scalar here");
    }
    text = typed.values[0];
  }
  switch (type) {
    case 'i': {
      const int64_t v = parse_integer(text, input);
      if (v < INT32_MIN || v > INT32_MAX) throw UsageError("input '" + input + "' does not fit in i32");
      return graphrt_apps::int_arg(v);
    }
    case 'I': return graphrt_apps::int_arg(parse_integer(text, input));
    case 'f': return graphrt_apps::float_arg(static_cast<float>(parse_number(text, input)));
    case 'F': return graphrt_apps::float_arg(parse_number(text, input));
  }
  throw UsageError("input '" + input + "': not a scalar type");
}

RetValue parse_input(const std::string& input, char type) {
  if (type != 'r') return scalar_from_text(input, type);
  if (input == "(null)") return RetValue();
  if (!input.empty() && input[0] == '@') return graphrt_apps::ndarray_arg(tensor_from_npy(input.substr(1)));
  TypedText typed;
  if (!parse_typed(input, &typed)) {
    throw UsageError("input '" + input + "': expected a tensor (2x3xf32=1,2,... or @file.npy)");
  }
  return graphrt_apps::ndarray_arg(tensor_from_text(input, typed));
}

// ---- results, printed as IREE prints them.
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string element_text(const graphrt::NDArray& t, int64_t i) {
  const void* p = element(t, i);
  const DLDataType d = t.dtype();
  if (d.code == kDLFloat) {
    if (d.bits == 32) {
      float f;
      std::memcpy(&f, p, 4);
      return number_text(f);
    }
    double v;
    std::memcpy(&v, p, 8);
    return number_text(v);
  }
  uint64_t u = 0;
  std::memcpy(&u, p, static_cast<size_t>(d.bits / 8));
  if (d.code == kDLUInt) return std::to_string(u);
  const int shift = 64 - d.bits;  // sign-extend through the top bits
  return std::to_string(static_cast<int64_t>(u << shift) >> shift);
}

// "2x3xf32=[1 2 3][4 5 6]", "4xi32=1 2 3 4", "f32=5".
std::string tensor_text(const graphrt::NDArray& t) {
  const std::vector<int64_t>& shape = t.shape();
  std::string type;
  for (int64_t d : shape) type += std::to_string(d) + "x";
  type += dtype_name(t.dtype());
  const int64_t n = element_count(t);
  std::string body;
  const int64_t row = shape.empty() ? 1 : shape.back();
  for (int64_t i = 0; i < n; ++i) {
    const bool nested = shape.size() > 1;
    if (nested && row > 0 && i % row == 0) body += "[";
    else if (i > 0) body += " ";
    body += element_text(t, i);
    if (nested && row > 0 && i % row == row - 1) body += "]";
  }
  return type + "=" + body;
}

bool is_vm_list(const RetValue& v) {
  if (v.code() != kTVMObjectHandle) return false;
  const std::string key = static_cast<graphrt::Object*>(v.value().v_handle)->object_type_key();
  return key == "graphrt.vm.List" || key == "graphrt.vm.Results";
}

// A list's elements with their cconv letters.
std::vector<std::pair<char, RetValue>> list_items(const graphrt::VmApi& vm, const RetValue& value) {
  const graphrt::Ref<graphrt::Object> list = value.as_args().as_object(0);
  const std::string types = vm.list_types(list);
  std::vector<std::pair<char, RetValue>> items;
  for (size_t i = 0; i < types.size(); ++i) items.emplace_back(types[i], vm.list_get(list, static_cast<int64_t>(i)));
  return items;
}

// One value of cconv type `type`, as the packed call returned it.
std::string value_text(const graphrt::VmApi& vm, char type, const RetValue& v) {
  switch (type) {
    case 'i': return "i32=" + std::to_string(v.as_int());
    case 'I': return "i64=" + std::to_string(v.as_int());
    case 'f': return "f32=" + number_text(static_cast<float>(v.as_float()));
    case 'F': return "f64=" + number_text(v.as_float());
  }
  if (v.is_none()) return "(null)";
  if (v.code() == kTVMNDArrayHandle) return "vm.tensor\n" + tensor_text(v.as_ndarray());
  if (v.code() == kTVMBytes) return "vm.buffer " + std::to_string(v.as_string().size()) + " bytes";
  if (is_vm_list(v)) {
    // As iree-run-module: the type, one "child_list[i]: " line per element, a blank line.
    std::string out = "vm.list";
    const auto items = list_items(vm, v);
    for (size_t i = 0; i < items.size(); ++i) {
      out += "\nchild_list[" + std::to_string(i) + "]: " + value_text(vm, items[i].first, items[i].second);
    }
    return out + "\n";
  }
  return "(unknown ref)";
}

void write_output(const std::string& path, char type, const RetValue& v) {
  switch (type) {
    case 'i': {
      const int32_t x = static_cast<int32_t>(v.as_int());
      return graphrt_apps::write_npy(path, {kDLInt, 32, 1}, {}, &x, 4);
    }
    case 'I': {
      const int64_t x = v.as_int();
      return graphrt_apps::write_npy(path, {kDLInt, 64, 1}, {}, &x, 8);
    }
    case 'f': {
      const float x = static_cast<float>(v.as_float());
      return graphrt_apps::write_npy(path, {kDLFloat, 32, 1}, {}, &x, 4);
    }
    case 'F': {
      const double x = v.as_float();
      return graphrt_apps::write_npy(path, {kDLFloat, 64, 1}, {}, &x, 8);
    }
  }
  if (v.code() != kTVMNDArrayHandle) {
    throw Error("only tensor and scalar results can be written as .npy").with("file", path);
  }
  const graphrt::NDArray t = v.as_ndarray();
  graphrt_apps::write_npy(path, t.dtype(), t.shape(), t.nbytes() ? element(t, 0) : nullptr, t.nbytes());
}

// The results of one call with their cconv letters: several come back as one list.
std::vector<std::pair<char, RetValue>> call_results(const graphrt::VmApi& vm, const std::string& types,
                                                    const RetValue& ret) {
  if (types.empty()) return {};
  if (types.size() == 1) return {{types[0], ret}};
  return list_items(vm, ret);
}

// ---- Ctrl-C: the handler only writes to a pipe (async-signal-safe); a
// watcher thread asks the runtime to interrupt the call, which then ends with
// a clean error.
int g_signal_pipe[2] = {-1, -1};
extern "C" void on_sigint(int) {
  const char byte = 'i';
  ssize_t ignored = write(g_signal_pipe[1], &byte, 1);
  (void)ignored;
}

class InterruptOnCtrlC {
 public:
  InterruptOnCtrlC(const graphrt::VmApi& vm, const graphrt::Module& module) {
    if (pipe(g_signal_pipe) != 0) throw Error("cannot create the Ctrl-C pipe");
    watcher_ = std::thread([vm, module] {
      for (;;) {
        char byte = 0;
        const ssize_t n = read(g_signal_pipe[0], &byte, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n != 1 || byte != 'i') return;
        vm.interrupt(module);
      }
    });
    std::signal(SIGINT, on_sigint);
  }
  ~InterruptOnCtrlC() {
    std::signal(SIGINT, SIG_DFL);
    const char quit = 'q';
    if (write(g_signal_pipe[1], &quit, 1) != 1) close(g_signal_pipe[1]);  // read() then sees end of file
    watcher_.join();
    close(g_signal_pipe[0]);
    close(g_signal_pipe[1]);
  }

 private:
  std::thread watcher_;
};

// ---- the run.
graphrt::Module link_modules(const graphrt::VmApi& vm, const std::vector<std::string>& specs) {
  if (specs.empty()) throw UsageError("no --module given");
  return vm.link(specs);
}

std::string exports_list(const graphrt::VmApi& vm, const graphrt::Module& module, const std::string& module_name) {
  std::string out;
  for (const std::string& f : module->function_names()) {
    out += " " + module_name + "." + f + "(" + vm.signature(module, f) + ")";
  }
  return out;
}

void set_tracer(const graphrt::VmApi& vm, const graphrt::Module& module, bool on) {
  if (!on) return vm.set_tracer(module, nullptr);
  vm.set_tracer(module, [](const std::string& line) { std::cerr << "[trace] " << line << "\n"; });
}

// The limits of the modules linked next (the library reads the variables too, but cannot report them).
void set_limits(const graphrt::VmApi& vm, const graphrt_apps::Args& args) {
  if (const char* env = std::getenv("GRAPHRT_VM_BUDGET")) vm.set_instruction_budget(env, "GRAPHRT_VM_BUDGET");
  if (args.has("--budget")) vm.set_instruction_budget(args.get("--budget"), "--budget");
  if (const char* env = std::getenv("GRAPHRT_VM_MEMORY_LIMIT")) vm.set_memory_limit(env, "GRAPHRT_VM_MEMORY_LIMIT");
  if (args.has("--memory-limit")) vm.set_memory_limit(args.get("--memory-limit"), "--memory-limit");
}

int run(int argc, char** argv) {
  graphrt_apps::Args args(kHelp, kFlags);
  if (!args.parse(argc, argv)) return 0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  const graphrt::VmApi vm;
  set_limits(vm, args);
  const graphrt::Module linked = link_modules(vm, args.all("--module"));
  const std::string main_module = vm.module_name(linked);

  if (!args.has("--function")) {
    throw UsageError("no --function given; exports of " + main_module + ":" + exports_list(vm, linked, main_module));
  }
  std::string name = args.get("--function");
  if (name.find('.') == std::string::npos) name = main_module + "." + name;
  const std::string types = vm.argument_types(linked, name);
  const std::string result_types = vm.result_types(linked, name);

  const std::vector<std::string>& inputs = args.all("--input");
  if (inputs.size() != types.size()) {
    throw UsageError(name + " takes " + std::to_string(types.size()) + " inputs (" +
                     vm.signature(linked, name) + "), got " + std::to_string(inputs.size()));
  }
  std::vector<RetValue> values;
  for (size_t i = 0; i < inputs.size(); ++i) values.push_back(parse_input(inputs[i], types[i]));

  const long long repeats = args.get_int("--benchmark", 0, 1, 1000000000);
  const std::vector<std::string>& outputs = args.all("--output");
  const graphrt::PackedFunc function = vm.function(linked, name);

  const InterruptOnCtrlC interrupt_on_ctrl_c(vm, linked);
  std::cout << "EXEC @" << name << "\n";
  if (args.has("--trace")) set_tracer(vm, linked, true);
  const std::vector<std::pair<char, RetValue>> results = call_results(vm, result_types, call_packed(function, values));
  if (args.has("--trace")) set_tracer(vm, linked, false);
  if (outputs.size() > results.size()) {
    throw UsageError(std::to_string(outputs.size()) + " --output flags for " + std::to_string(results.size()) +
                     " results");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string out = i < outputs.size() ? outputs[i] : "-";
    if (out != "-" && !out.empty()) {
      if (out[0] != '@') throw UsageError("--output '" + out + "': expected @FILE.npy or -");
      write_output(out.substr(1), results[i].first, results[i].second);
      std::cout << "result[" << i << "]: written to " << out.substr(1) << "\n";
      continue;
    }
    std::cout << "result[" << i << "]: " << value_text(vm, results[i].first, results[i].second) << "\n";
  }

  if (repeats > 0) {
    std::vector<double> us;
    for (long long r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      call_packed(function, values);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    double total = 0;
    for (double u : us) total += u;
    std::printf("benchmark: %lld runs, mean %.3f us, median %.3f us, min %.3f us\n", repeats,
                total / static_cast<double>(us.size()), us[us.size() / 2], us.front());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-vm-run", run, argc, argv); }
