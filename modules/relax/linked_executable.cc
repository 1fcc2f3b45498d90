#include "modules/relax/linked_executable.h"

namespace graphrt {
namespace relax {

namespace {

Callee resolve(const FunctionInfo& f, const FunctionFinder& find) {
  Callee c;
  if (f.kind == FunctionKind::kVMFunc) return c;
  if (BuiltinFn b = find_builtin(f.name)) {
    c.kind = Callee::kBuiltin;
    c.builtin = b;
    return c;
  }
  c.kind = Callee::kPacked;
  c.packed = find(f.name);
  if (!c.packed)
    throw Error(ErrorKind::kNotFound, "the Relax executable calls '" + f.name +
                                          "', which neither its library nor graphrt's registry provides")
        .with("function", f.name);
  return c;
}

// Function-table references to kernels travel as the kernel itself, so packed
// callees (call_tir_dyn, user functions) can call them.
void bind_kernel_references(LinkedExecutable& linked) {
  for (Value& v : linked.program.literals) {
    auto* closure = std::get_if<Ref<ClosureObj>>(&v);
    if (!closure || (*closure)->function < 0) continue;
    const Callee& c = linked.callees[static_cast<size_t>((*closure)->function)];
    if (c.kind == Callee::kPacked) v = c.packed;
  }
}

}  // namespace

std::shared_ptr<const LinkedExecutable> link_executable(std::shared_ptr<const Executable> exe, const FunctionFinder& find) {
  auto linked = std::make_shared<LinkedExecutable>();
  linked->callees.reserve(exe->functions.size());
  for (const FunctionInfo& f : exe->functions) linked->callees.push_back(resolve(f, find));
  linked->program = decode_program(*exe);
  bind_kernel_references(*linked);
  linked->exe = std::move(exe);
  return linked;
}

}  // namespace relax
}  // namespace graphrt
