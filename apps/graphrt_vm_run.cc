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
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/args.h"
#include "common/npy.h"
#include "graphrt/error.h"
#include "modules/vm/buffer.h"
#include "modules/vm/context.h"
#include "modules/vm/disassembler.h"
#include "modules/vm/limits.h"
#include "modules/vm/list.h"
#include "modules/vm/module_address.h"
#include "modules/vm/module_loader.h"
#include "modules/vm/program.h"
#include "modules/vm/signature.h"
#include "modules/vm/tensor.h"
#include "modules/vm/tensor_module.h"
#include "modules/vm/tvm_module.h"

namespace {

using graphrt::Error;
using graphrt_apps::UsageError;
namespace vm = graphrt::vm;

const char* kUsage =
    "usage: graphrt-vm-run --module=FILE.vmbc|FILE.vmasm|LIB.so[@create][?k=v] [--module=...]\n"
    "                      --function=NAME [--input=VALUE ...] [--output=@FILE.npy|- ...]\n"
    "                      [--budget=N] [--trace] [--benchmark=N]\n"
    "  --input   i32=5 | f32=1.5 | 5 | 2x3xf32=1,2,3,4,5,6 | 4xi32=7 (splat) | @file.npy\n"
    "  --output  one per result, in order: @file.npy writes it, - prints it (default)\n"
    "  --budget  branches + calls the call may execute (default GRAPHRT_VM_BUDGET or 100000000)\n"
    "  --trace   print every executed instruction to stderr\n"
    "  --benchmark N  run N more times and print timings\n";

// Stops the running call on Ctrl-C: the VM ends it with a clean error.
vm::Interrupt* g_interrupt = nullptr;
extern "C" void on_sigint(int) {
  if (g_interrupt) g_interrupt->request();
}

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

void store_element(vm::Tensor& t, int64_t i, const std::string& text, const std::string& input) {
  void* p = t.element(i);
  const DLDataType d = t.dl()->dtype;
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

// ---- inputs.
vm::VmRef tensor_from_npy(const std::string& path) {
  const graphrt_apps::NpyArray a = graphrt_apps::read_npy(path);
  auto t = std::make_shared<vm::OwnedTensor>(a.shape, a.dtype);
  if (!a.data.empty()) std::memcpy(t->dl()->data, a.data.data(), a.data.size());
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

vm::VmRef tensor_from_text(const std::string& input, const TypedText& typed) {
  auto t = std::make_shared<vm::OwnedTensor>(typed.shape, typed.dtype);
  const int64_t n = t->element_count();
  if (!typed.has_values) return t;  // zero-filled
  const size_t count = typed.values.size();
  if (count != 1 && count != static_cast<size_t>(n)) {
    throw UsageError("input '" + input + "': " + std::to_string(count) + " values for " + std::to_string(n) +
                     " elements");
  }
  for (int64_t i = 0; i < n; ++i) store_element(*t, i, typed.values[count == 1 ? 0 : static_cast<size_t>(i)], input);
  return t;
}

vm::Value scalar_from_text(const std::string& input, vm::ValueType type) {
  std::string text = input;
  TypedText typed;
  if (parse_typed(input, &typed)) {
    if (!typed.shape.empty() || typed.values.size() != 1) {
      throw UsageError("input '" + input + "': the function takes a scalar here");
    }
    text = typed.values[0];
  }
  switch (type) {
    case vm::ValueType::kI32: {
      const int64_t v = parse_integer(text, input);
      if (v < INT32_MIN || v > INT32_MAX) throw UsageError("input '" + input + "' does not fit in i32");
      return vm::Value::from_i32(static_cast<int32_t>(v));
    }
    case vm::ValueType::kI64: return vm::Value::from_i64(parse_integer(text, input));
    case vm::ValueType::kF32: return vm::Value::from_f32(static_cast<float>(parse_number(text, input)));
    case vm::ValueType::kF64: return vm::Value::from_f64(parse_number(text, input));
    case vm::ValueType::kRef: break;
  }
  throw UsageError("input '" + input + "': not a scalar type");
}

vm::Value parse_input(const std::string& input, vm::ValueType type) {
  if (type != vm::ValueType::kRef) return scalar_from_text(input, type);
  if (input == "(null)") return vm::Value::from_ref(nullptr);
  if (!input.empty() && input[0] == '@') return vm::Value::from_ref(tensor_from_npy(input.substr(1)));
  TypedText typed;
  if (!parse_typed(input, &typed)) {
    throw UsageError("input '" + input + "': expected a tensor (2x3xf32=1,2,... or @file.npy)");
  }
  return vm::Value::from_ref(tensor_from_text(input, typed));
}

// ---- results, printed as IREE prints them.
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string element_text(vm::Tensor& t, int64_t i) {
  const void* p = t.element(i);
  const DLDataType d = t.dl()->dtype;
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
std::string tensor_text(vm::Tensor& t) {
  DLTensor* dl = t.dl();
  std::string type;
  for (int i = 0; i < dl->ndim; ++i) type += std::to_string(dl->shape[i]) + "x";
  type += dtype_name(dl->dtype);
  const int64_t n = t.element_count();
  std::string body;
  const int64_t row = dl->ndim > 0 ? dl->shape[dl->ndim - 1] : 1;
  for (int64_t i = 0; i < n; ++i) {
    const bool nested = dl->ndim > 1;
    if (nested && row > 0 && i % row == 0) body += "[";
    else if (i > 0) body += " ";
    body += element_text(t, i);
    if (nested && row > 0 && i % row == row - 1) body += "]";
  }
  return type + "=" + body;
}

std::string value_text(const vm::Value& v) {
  switch (v.type) {
    case vm::ValueType::kI32: return "i32=" + std::to_string(v.i32);
    case vm::ValueType::kI64: return "i64=" + std::to_string(v.i64);
    case vm::ValueType::kF32: return "f32=" + number_text(v.f32);
    case vm::ValueType::kF64: return "f64=" + number_text(v.f64);
    case vm::ValueType::kRef: break;
  }
  if (!v.ref) return "(null)";
  if (auto* t = vm::ref_as<vm::Tensor>(v.ref)) return "vm.tensor\n" + tensor_text(*t);
  if (auto* b = vm::ref_as<vm::Buffer>(v.ref)) return "vm.buffer " + std::to_string(b->bytes().size()) + " bytes";
  if (auto* l = vm::ref_as<vm::List>(v.ref)) {
    // As iree-run-module: the type, one "child_list[i]: " line per element, a blank line.
    std::string out = "vm.list";
    for (int64_t i = 0; i < l->size(); ++i) out += "\nchild_list[" + std::to_string(i) + "]: " + value_text(l->at(i));
    return out + "\n";
  }
  return "(unknown ref)";
}

void write_output(const std::string& path, const vm::Value& v) {
  if (v.type == vm::ValueType::kRef) {
    auto* t = vm::ref_as<vm::Tensor>(v.ref);
    if (!t) throw Error("only tensor and scalar results can be written as .npy").with("file", path);
    DLTensor* dl = t->dl();
    const std::vector<int64_t> shape(dl->shape, dl->shape + dl->ndim);
    const size_t bytes = static_cast<size_t>(t->element_count() * vm::dtype_bytes(dl->dtype));
    graphrt_apps::write_npy(path, dl->dtype, shape, t->element_count() ? t->element(0) : nullptr, bytes);
    return;
  }
  switch (v.type) {
    case vm::ValueType::kI32: graphrt_apps::write_npy(path, {kDLInt, 32, 1}, {}, &v.i32, 4); break;
    case vm::ValueType::kI64: graphrt_apps::write_npy(path, {kDLInt, 64, 1}, {}, &v.i64, 8); break;
    case vm::ValueType::kF32: graphrt_apps::write_npy(path, {kDLFloat, 32, 1}, {}, &v.f32, 4); break;
    case vm::ValueType::kF64: graphrt_apps::write_npy(path, {kDLFloat, 64, 1}, {}, &v.f64, 8); break;
    case vm::ValueType::kRef: break;
  }
}

// ---- the run.
struct Linked {
  std::unique_ptr<vm::Context> context;
  std::shared_ptr<vm::VmModule> last_module;
};

Linked link_modules(const std::vector<std::string>& specs) {
  if (specs.empty()) throw UsageError("no --module given");
  Linked out;
  out.context = std::make_unique<vm::Context>(vm::Instance::create());
  out.context->register_module(vm::create_tensor_module());
  // No TVM library here: tvm.call links but reports the kernel as missing.
  out.context->register_module(vm::create_tvm_module(vm::KernelResolver()));
  for (const std::string& spec : specs) {
    std::shared_ptr<vm::VmModule> module = vm::load_module_file(spec);
    // Dependencies the module declares with a source are loaded relative to its file.
    const std::string path = vm::parse_module_address(spec).path;
    const size_t slash = path.rfind('/');
    vm::link_declared_dependencies(*out.context, *module, slash == std::string::npos ? "." : path.substr(0, slash));
    out.context->register_module(module);
    out.last_module = module;
  }
  return out;
}

std::string exports_list(const vm::VmModule& module) {
  std::string out;
  for (const vm::ExportDecl& e : module.exports()) out += " " + module.name() + "." + e.name + "(" + e.signature + ")";
  return out;
}

void print_trace(const vm::BytecodeModule& module, uint32_t function, uint32_t pc) {
  std::cerr << "[trace] " << module.name() << "." << module.def().functions[function].name << "@" << pc << ": "
            << vm::disassemble_instruction(module.def(), function, pc) << "\n";
}

int run(int argc, char** argv) {
  graphrt_apps::Args args({{"--module", true, true},
                           {"--function", true},
                           {"--input", true, true},
                           {"--output", true, true},
                           {"--budget", true},
                           {"--trace", false},
                           {"--benchmark", true},
                           {"--help", false}});
  args.parse(argc, argv);
  if (args.has("--help")) {
    std::cout << kUsage;
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  if (const char* env = std::getenv("GRAPHRT_VM_BUDGET")) vm::parse_budget(env, "GRAPHRT_VM_BUDGET");
  Linked linked = link_modules(args.all("--module"));
  vm::Context& context = *linked.context;
  if (args.has("--budget")) context.set_instruction_budget(vm::parse_budget(args.get("--budget"), "--budget"));

  if (!args.has("--function")) {
    throw UsageError("no --function given; exports of " + linked.last_module->name() + ":" +
                     exports_list(*linked.last_module));
  }
  std::string name = args.get("--function");
  if (name.find('.') == std::string::npos) name = linked.last_module->name() + "." + name;
  const vm::FunctionRef fn = context.resolve(name);
  const vm::Signature sig = vm::parse_signature(fn.module->exports()[fn.ordinal].signature);
  const std::vector<vm::ValueType> types = sig.arg_types();

  const std::vector<std::string>& inputs = args.all("--input");
  if (inputs.size() != types.size() || sig.is_variadic()) {
    throw UsageError(name + " takes " + std::to_string(types.size()) + " inputs (" +
                     fn.module->exports()[fn.ordinal].signature + "), got " + std::to_string(inputs.size()));
  }
  std::vector<vm::Value> values;
  for (size_t i = 0; i < inputs.size(); ++i) values.push_back(parse_input(inputs[i], types[i]));

  const long long repeats = args.get_int("--benchmark", 0, 1, 1000000000);
  const std::vector<std::string>& outputs = args.all("--output");

  g_interrupt = context.interrupt_source().get();
  std::signal(SIGINT, on_sigint);
  const vm::Tracer tracer = print_trace;
  auto call = [&](bool trace) {
    vm::Stack stack;
    stack.set_budget(context.instruction_budget());
    if (trace) stack.set_tracer(&tracer);
    return context.invoke(name, values, stack);
  };

  std::cout << "EXEC @" << name << "\n";
  const std::vector<vm::Value> results = call(args.has("--trace"));
  if (outputs.size() > results.size()) {
    throw UsageError(std::to_string(outputs.size()) + " --output flags for " + std::to_string(results.size()) +
                     " results");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string out = i < outputs.size() ? outputs[i] : "-";
    if (out != "-" && !out.empty()) {
      if (out[0] != '@') throw UsageError("--output '" + out + "': expected @FILE.npy or -");
      write_output(out.substr(1), results[i]);
      std::cout << "result[" << i << "]: written to " << out.substr(1) << "\n";
      continue;
    }
    std::cout << "result[" << i << "]: " << value_text(results[i]) << "\n";
  }

  if (repeats > 0) {
    std::vector<double> us;
    for (long long r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      call(false);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    double total = 0;
    for (double u : us) total += u;
    std::printf("benchmark: %lld runs, mean %.3f us, median %.3f us, min %.3f us\n", repeats,
                total / static_cast<double>(us.size()), us[us.size() / 2], us.front());
  }
  std::signal(SIGINT, SIG_DFL);
  g_interrupt = nullptr;
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-vm-run", run, argc, argv); }
