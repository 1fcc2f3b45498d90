#include "backends/relax/linked_executable.h"

#include <algorithm>

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

std::vector<std::pair<uintptr_t, uintptr_t>> constant_ranges(const Executable& exe) {
  std::vector<std::pair<uintptr_t, uintptr_t>> out;
  for (const Value& v : exe.constants) {
    const NDArray* t = std::get_if<NDArray>(&v);
    if (!t || !t->handle() || t->nbytes() == 0) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(static_cast<const char*>((*t)->data) + (*t)->byte_offset);
    out.emplace_back(begin, begin + t->nbytes());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool LinkedExecutable::overlaps_constant(const void* data, size_t n) const {
  if (constant_bytes.empty() || n == 0) return false;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = begin + n;
  // The ranges may overlap each other (views of one array): any starting before `end` may reach `begin`.
  auto last = std::lower_bound(constant_bytes.begin(), constant_bytes.end(), std::make_pair(end, uintptr_t{0}));
  for (auto it = constant_bytes.begin(); it != last; ++it)
    if (it->second > begin) return true;
  return false;
}

std::shared_ptr<const LinkedExecutable> link_executable(std::shared_ptr<const Executable> exe, const FunctionFinder& find,
                                                        const Runtime* runtime) {
  auto linked = std::make_shared<LinkedExecutable>();
  linked->runtime = runtime;
  linked->callees.reserve(exe->functions.size());
  for (const FunctionInfo& f : exe->functions) linked->callees.push_back(resolve(f, find));
  linked->program = decode_program(*exe);
  bind_kernel_references(*linked);
  linked->constant_bytes = constant_ranges(*exe);
  linked->exe = std::move(exe);
  return linked;
}

}  // namespace relax
}  // namespace graphrt
