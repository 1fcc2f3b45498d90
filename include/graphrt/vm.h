// The graphrt VM (the IREE-style bytecode VM back end) from C++, typed:
// assemble, verify and disassemble bytecode, load and link VM modules, ask a
// module about its functions, trace, interrupt, set limits, build and read VM
// lists.
//
//   graphrt::VmApi vm;                                   // the default runtime's VM
//   std::string image = vm.assemble(text);               // a verified .vmbc image
//   graphrt::Module m = vm.load("demo.vmbc");
//   graphrt::ArgList args;
//   args.add_int(1).add_int(2);
//   int64_t three = graphrt::call_function(m->require_function("add"), args).as_int();
//
// A thin layer over the back end's graphrt.vm.* global functions of one
// runtime (the ones C and Python call by name, listed in
// backends/vm/README.md); it lives in this header only, so it adds nothing to
// libgraphrt's exported names. Errors are the functions' graphrt::Errors,
// kinds included. The limits it sets are that runtime's: another runtime's
// VM keeps its own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graphrt/runtime.h"

namespace graphrt {

class VmApi {
 public:
  // The VM of `runtime` (by default the process's); throws kNotFound when
  // that runtime has no VM back end (it was left out of the build, or not
  // registered into a runtime made empty).
  explicit VmApi(Runtime& runtime = graphrt::runtime()) : runtime_(&runtime) { global("graphrt.vm.assemble"); }

  // Bytecode: VM assembly (.vmasm text) as a verified .vmbc image (syntax
  // errors name the line); what a load would refuse an image for; a
  // verified image as text that assembles back to the same bytes.
  std::string assemble(const std::string& text) const { return call("graphrt.vm.assemble", {text_arg(text)}).as_string(); }
  void verify(const std::string& bytecode) const { call("graphrt.vm.verify", {bytes_arg(bytecode)}); }
  std::string disassemble(const std::string& bytecode) const {
    return call("graphrt.vm.disassemble", {bytes_arg(bytecode)}).as_string();
  }

  // Modules. load: one program (.vmbc / .vmasm) linked after the built-ins
  // and `modules` (lib.so@create?k=v, .vmbc, .vmasm), functions by plain
  // name. link: `modules` linked in order into one context, functions by
  // full name ("mod.fn") or the last module's plain name.
  Module load(const std::string& path, const std::vector<std::string>& modules = {}) const {
    std::vector<RetValue> args{text_arg(path)};
    for (const std::string& m : modules) args.push_back(text_arg(m));
    return call("graphrt.vm.load", args).as_module();
  }
  Module link(const std::vector<std::string>& modules) const {
    std::vector<RetValue> args;
    for (const std::string& m : modules) args.push_back(text_arg(m));
    return call("graphrt.vm.link", args).as_module();
  }

  // What a VM module (of load or link, or a `graphrt_vm` record) says about
  // its functions: the module plain names belong to; a function's cconv
  // signature ("0ii_i"); one cconv letter per argument / result (i i32, I
  // i64, f f32, F f64, r ref; variadic functions are refused).
  std::string module_name(const Module& module) const {
    return call("graphrt.vm.module_name", {module_arg(module)}).as_string();
  }
  std::string signature(const Module& module, const std::string& function) const {
    return call("graphrt.vm.signature", {module_arg(module), text_arg(function)}).as_string();
  }
  std::string argument_types(const Module& module, const std::string& function) const {
    return call("graphrt.vm.argument_types", {module_arg(module), text_arg(function)}).as_string();
  }
  std::string result_types(const Module& module, const std::string& function) const {
    return call("graphrt.vm.result_types", {module_arg(module), text_arg(function)}).as_string();
  }
  // The function itself, to call with its cconv arguments (a kNotFound Error naming it otherwise).
  PackedFunc function(const Module& module, const std::string& name) const {
    return module->require_function(name);
  }

  // Later calls into `module` report every bytecode instruction to `tracer`
  // ("demo.add@1: add.i32 %i2, %i0, %i1"); an empty `tracer` stops tracing.
  void set_tracer(const Module& module, std::function<void(const std::string& line)> tracer) const {
    RetValue f;
    if (tracer) {
      f.set_function(make_function([tracer](const TVMArgs& args, RetValue*) { tracer(args.as_string(0)); }));
    }
    call("graphrt.vm.set_tracer", {module_arg(module), f});
  }
  // Thread-safe: stops the VM calls running now in `module`'s tree.
  void interrupt(const Module& module) const { call("graphrt.vm.interrupt", {module_arg(module)}); }

  // This runtime's limits: branches + calls per call of modules loaded
  // afterwards; bytes its live VM buffers and tensors may hold. Both positive.
  void set_instruction_budget(uint64_t budget) const {
    call("graphrt.vm.set_instruction_budget", {int_arg(static_cast<int64_t>(budget))});
  }
  void set_memory_limit(int64_t bytes) const { call("graphrt.vm.set_memory_limit", {int_arg(bytes)}); }
  // The same from text a user gave (a positive decimal integer); an Error names `source`
  // (where the text came from: an environment variable, a flag).
  void set_instruction_budget(const std::string& text, const std::string& source) const {
    call("graphrt.vm.set_instruction_budget", {text_arg(text), text_arg(source)});
  }
  void set_memory_limit(const std::string& text, const std::string& source) const {
    call("graphrt.vm.set_memory_limit", {text_arg(text), text_arg(source)});
  }

  // VM lists (object type key "graphrt.vm.List"): one cconv letter per item
  // in `types`, items converted as VM calls convert arguments; a list passed
  // to a VM function is the same list, and VM functions return lists so.
  Ref<Object> list(const std::string& types, const std::vector<RetValue>& items) const {
    std::vector<RetValue> args{text_arg(types)};
    args.insert(args.end(), items.begin(), items.end());
    return call("graphrt.vm.list", args).as_args().as_object(0);
  }
  int64_t list_size(const Ref<Object>& list) const { return call("graphrt.vm.list_size", {object_arg(list)}).as_int(); }
  RetValue list_get(const Ref<Object>& list, int64_t index) const {
    return call("graphrt.vm.list_get", {object_arg(list), int_arg(index)});
  }
  std::string list_types(const Ref<Object>& list) const {
    return call("graphrt.vm.list_types", {object_arg(list)}).as_string();
  }

 private:
  PackedFunc global(const std::string& name) const {
    PackedFunc f = runtime_->function(name);
    if (!f) throw Error(ErrorKind::kNotFound, "this runtime has no VM back end").with("function", name);
    return f;
  }
  RetValue call(const std::string& name, const std::vector<RetValue>& args) const {
    return call_with_values(global(name), args);
  }
  static RetValue text_arg(const std::string& s) {
    RetValue r;
    r.set_string(s);
    return r;
  }
  static RetValue bytes_arg(const std::string& s) {
    RetValue r;
    r.set_bytes(s);
    return r;
  }
  static RetValue int_arg(int64_t v) {
    RetValue r;
    r.set_int(v);
    return r;
  }
  static RetValue module_arg(const Module& m) {
    RetValue r;
    r.set_module(m);
    return r;
  }
  static RetValue object_arg(const Ref<Object>& o) {
    RetValue r;
    r.set_object(o);
    return r;
  }

  Runtime* runtime_;
};

}  // namespace graphrt
