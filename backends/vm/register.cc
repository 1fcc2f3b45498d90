// The VM back end's registration: the `graphrt_vm` blob record becomes a
// module whose exported functions graph nodes (and C / Python callers) can
// call, and whose `tvm.call` reaches the kernels of the library it was packed
// with; plus the graphrt.vm.* global functions, which make the VM usable
// through the public API (C, C++, Python) without its headers: assembling,
// verifying and disassembling bytecode, loading and linking modules, asking a
// module for its functions' signatures, tracing, budget and interrupt, and
// the list functions (packed_call.h).
//
// Each runtime the back end registers into gets its own VM Instance (module
// factories and limits, limits.h), held by the functions and the record
// loader registered there, so it lives as long as that runtime's registries:
// graphrt.vm.set_instruction_budget on one runtime leaves another's alone.
#include "backends/vm/register.h"

#include <string>
#include <vector>

#include "graphrt/binary_loader.h"
#include "graphrt/module.h"
#include "graphrt/registry.h"
#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/bytecode/bytecode_disassembler.h"
#include "backends/vm/tvm_bridge/host_module.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/bytecode/module_loader.h"
#include "backends/vm/tvm_bridge/packed_call.h"
#include "backends/vm/host/signature.h"
#include "backends/vm/bytecode/bytecode_verifier.h"

namespace graphrt {
namespace vm {

namespace {

// What the functions of one runtime share: that runtime's VM instance.
struct Registration {
  Runtime& runtime;
  std::shared_ptr<Instance> instance;
};

// Registers `body`, run under the runtime's VM limits (what it verifies,
// allocates or loads is held to them).
void set_function(const Registration& to, const std::string& name, PackedBody body) {
  std::shared_ptr<Limits> limits = to.instance->limits();
  to.runtime.set_function(name, make_function([limits, body](const TVMArgs& args, RetValue* ret) {
    LimitsScope scope(limits);
    body(args, ret);
  }, name));
}

void require_arguments(const TVMArgs& args, int count, const std::string& usage) {
  if (args.size() < count) throw Error(usage + ": " + std::to_string(args.size()) + " arguments given");
}

// Argument `i` as a module made by graphrt.vm.load / graphrt.vm.link or a `graphrt_vm` record.
VmHostModuleNode& host_module_arg(const TVMArgs& args, int i, const std::string& function) {
  auto* node = dynamic_cast<VmHostModuleNode*>(args.as_module(i).get());
  if (!node) throw Error(ErrorKind::kTypeMismatch,
                         function + ": argument " + std::to_string(i) + " is not a VM module");
  return *node;
}

// Argument 0 of a limit setter: a positive integer, or a string read as one
// (errors name argument 1, where the text came from, e.g. "--budget").
int64_t positive_limit_arg(const TVMArgs& args, const std::string& function) {
  require_arguments(args, 1, function + "(n)");
  if (args.code(0) == kTVMStr)
    return parse_memory_limit(args.as_string(0), args.size() > 1 ? args.as_string(1) : function);
  const int64_t n = args.as_int(0);
  if (n <= 0) throw Error(function + ": the value must be positive");
  return n;
}

// A .vmbc image argument, parsed and verified.
ModuleDef verified_bytecode_arg(const TVMArgs& args, int i) {
  const std::string bytes = args.as_string(i);
  ModuleDef def = read_module_def(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  verify_module(def);
  return def;
}

std::string type_letters(const std::vector<ValueType>& types) {
  std::string letters;
  for (ValueType t : types) letters += value_type_letter(t);
  return letters;
}

// The parsed signature of `function` of the module argument 0; refuses
// variadic ones (hosts cannot call them).
Signature callable_signature(const TVMArgs& args, const std::string& function) {
  require_arguments(args, 2, function + "(module, function)");
  VmHostModuleNode& module = host_module_arg(args, 0, function);
  const std::string name = args.as_string(1);
  const ExportDecl& e = module.find_export(name);
  Signature sig = parse_signature(e.signature);
  if (sig.is_variadic()) {
    throw Error(ErrorKind::kUnsupported, "VM function '" + module.full_name(name) + "' is variadic (" + e.signature +
                "): hosts cannot call it");
  }
  return sig;
}

// Bytecode in and out: assemble / verify / disassemble.
void register_bytecode_functions(const Registration& to) {
  // graphrt.vm.assemble(text) -> bytes: VM assembly (.vmasm) as a verified
  // .vmbc image; syntax errors name the line.
  set_function(to, "graphrt.vm.assemble", [](const TVMArgs& args, RetValue* ret) {
    require_arguments(args, 1, "graphrt.vm.assemble(text)");
    ModuleDef def = assemble(args.as_string(0));
    verify_module(def);  // never hand out bytecode that a load would refuse
    const std::vector<uint8_t> bytes = write_module_def(def);
    ret->set_bytes(std::string(bytes.begin(), bytes.end()));
  });
  // graphrt.vm.verify(bytecode): throws what a load would refuse the image for.
  set_function(to, "graphrt.vm.verify", [](const TVMArgs& args, RetValue*) {
    require_arguments(args, 1, "graphrt.vm.verify(bytecode)");
    verified_bytecode_arg(args, 0);
  });
  // graphrt.vm.disassemble(bytecode) -> str: a verified image as text that
  // assembles back to the same bytes.
  set_function(to, "graphrt.vm.disassemble", [](const TVMArgs& args, RetValue* ret) {
    require_arguments(args, 1, "graphrt.vm.disassemble(bytecode)");
    ret->set_string(disassemble(verified_bytecode_arg(args, 0)));
  });
}

// Loading and linking modules.
void register_module_functions(const Registration& to) {
  // graphrt.vm.load(path, [module, ...]): a .vmbc / .vmasm file as a module
  // whose exports take and return scalars and tensors (packed_call.h); the
  // optional further arguments (lib.so@create?k=v, .vmbc, .vmasm) are linked
  // first, in order.
  std::shared_ptr<Instance> instance = to.instance;
  set_function(to, "graphrt.vm.load", [instance](const TVMArgs& args, RetValue* ret) {
    require_arguments(args, 1, "graphrt.vm.load(path, [module, ...])");
    const std::string path = args.as_string(0);
    std::vector<std::shared_ptr<VmModule>> extra;
    for (int i = 1; i < args.size(); ++i) extra.push_back(load_module_file(args.as_string(i)));
    const size_t slash = path.rfind('/');
    ret->set_module(make_program_module(load_bytecode_file(path), std::move(extra),
                                        slash == std::string::npos ? "." : path.substr(0, slash),
                                        /*link_now=*/true, instance));
  });
  // graphrt.vm.link(module, ...): the modules (.vmbc, .vmasm,
  // lib.so@create?k=v) linked in order into one context after the built-in
  // `tensor` and `tvm` modules; its functions are any linked module's by full
  // name ("sample.scaled_add") and the last module's by plain name.
  set_function(to, "graphrt.vm.link", [instance](const TVMArgs& args, RetValue* ret) {
    std::vector<std::string> specs;
    for (int i = 0; i < args.size(); ++i) specs.push_back(args.as_string(i));
    ret->set_module(make_context_module(specs, instance));
  });
}

// What a VM module is asked about its functions, and how its calls are steered.
void register_query_functions(const Registration& to) {
  // graphrt.vm.module_name(module) -> str: the VM module that plain function
  // names belong to (the program; for graphrt.vm.link, the last module).
  set_function(to, "graphrt.vm.module_name", [](const TVMArgs& args, RetValue* ret) {
    require_arguments(args, 1, "graphrt.vm.module_name(module)");
    ret->set_string(host_module_arg(args, 0, "graphrt.vm.module_name").main_module().name());
  });
  // graphrt.vm.signature(module, function) -> str: the cconv signature the
  // function was declared with ("0ii_i").
  set_function(to, "graphrt.vm.signature", [](const TVMArgs& args, RetValue* ret) {
    require_arguments(args, 2, "graphrt.vm.signature(module, function)");
    ret->set_string(host_module_arg(args, 0, "graphrt.vm.signature").find_export(args.as_string(1)).signature);
  });
  // graphrt.vm.argument_types(module, function) / result_types -> str: one
  // letter per argument / result (i i32, I i64, f f32, F f64, r ref).
  set_function(to, "graphrt.vm.argument_types", [](const TVMArgs& args, RetValue* ret) {
    ret->set_string(type_letters(callable_signature(args, "graphrt.vm.argument_types").arg_types()));
  });
  set_function(to, "graphrt.vm.result_types", [](const TVMArgs& args, RetValue* ret) {
    ret->set_string(type_letters(callable_signature(args, "graphrt.vm.result_types").result_types()));
  });
  // graphrt.vm.set_tracer(module, f): later calls into `module` call f(line)
  // before every bytecode instruction ("demo.add@1: add.i32 %i2, %i0, %i1");
  // None stops tracing.
  set_function(to, "graphrt.vm.set_tracer", [](const TVMArgs& args, RetValue*) {
    require_arguments(args, 2, "graphrt.vm.set_tracer(module, function)");
    VmHostModuleNode& module = host_module_arg(args, 0, "graphrt.vm.set_tracer");
    module.set_tracer(args.code(1) == kTVMNullptr ? PackedFunc() : args.as_function(1));
  });
  // graphrt.vm.interrupt(module): thread-safe; stops the VM calls running
  // now in `module`'s tree (a library whose graph nodes call VM functions,
  // or a VM module) with "VM invocation interrupted".
  set_function(to, "graphrt.vm.interrupt", [](const TVMArgs& args, RetValue*) {
    require_arguments(args, 1, "graphrt.vm.interrupt(module)");
    interrupt_tree(args.as_module(0).get());
  });
  // graphrt.vm.set_instruction_budget(n): budget (branches + calls per call)
  // of VM modules this runtime loads afterwards; the default comes from
  // GRAPHRT_VM_BUDGET.
  // A string n is read as a positive decimal integer; errors name the
  // optional second argument (where the text came from, e.g. "--budget").
  std::shared_ptr<Limits> limits = to.instance->limits();
  set_function(to, "graphrt.vm.set_instruction_budget", [limits](const TVMArgs& args, RetValue*) {
    limits->instruction_budget = static_cast<uint64_t>(positive_limit_arg(args, "graphrt.vm.set_instruction_budget"));
  });
  // graphrt.vm.set_memory_limit(bytes): the total that live VM buffers and
  // tensors of this runtime's VM may hold (default from GRAPHRT_VM_MEMORY_LIMIT, else 512 MiB);
  // strings are read and named as set_instruction_budget reads them.
  set_function(to, "graphrt.vm.set_memory_limit", [limits](const TVMArgs& args, RetValue*) {
    limits->max_total_bytes = positive_limit_arg(args, "graphrt.vm.set_memory_limit");
  });
}

}  // namespace

void register_backend(Runtime& runtime) {
  const Registration to{runtime, Instance::create(Limits::from_environment())};
  register_list_functions(runtime, to.instance->limits());
  register_bytecode_functions(to);
  register_module_functions(to);
  register_query_functions(to);
  // The record: verified now, linked when it joins the library's tree.
  std::shared_ptr<Instance> instance = to.instance;
  runtime.register_binary_loader("graphrt_vm", [instance](BlobReader& reader) {
    LimitsScope scope(instance->limits());
    const std::string bytecode = reader.read_string("graphrt_vm bytecode");
    auto module = BytecodeModule::load(reinterpret_cast<const uint8_t*>(bytecode.data()), bytecode.size());
    return make_program_module(std::move(module), {}, "", /*link_now=*/false, instance);
  });
}

}  // namespace vm
}  // namespace graphrt
