// libFuzzer target: a Relax VM executable run, not only read. It is read,
// verified and linked with the real builtins (every other packed function, the
// kernels, resolved to a stub that does nothing), then each VM function is
// called twice (the second call reuses the first's storages) with arguments
// made from what its prologue checks, under a small instruction budget and a
// small storage cap. Whatever the code hands the builtins must end in a
// graphrt::Error, never a crash, a leak, a hang or a huge allocation.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/relax/executable_reader.h"
#include "backends/relax/interpreter.h"
#include "backends/relax/linked_executable.h"
#include "backends/relax/packed_convention.h"
#include "backends/relax/param_signature.h"
#include "backends/relax/verifier.h"

namespace {

using namespace graphrt::relax;

constexpr uint64_t kInstructionBudget = 100000;
constexpr int64_t kMaxStorage = int64_t{8} << 20;  // what the VM's pool may hold at once
constexpr int64_t kMaxArgumentBytes = int64_t{1} << 20;
constexpr size_t kMaxFunctionsRun = 8;

// A dimension for `s`'s dimension `i`: the fixed size, or 1..4 for a
// symbolic one (the same for dimensions sharing a heap slot); -1 when the
// fixed size is not one an argument can have.
int64_t dimension(const ParamSignature& s, size_t i) {
  const int64_t d = s.dims[i];
  if (d != ParamSignature::kAnyDim) return d >= 0 && d <= kMaxArgumentBytes ? d : -1;
  return s.symbols[i] >= 0 ? 1 + s.symbols[i] % 4 : 2;
}

// An argument for one parameter: a tensor of its dtype and shape (float32[2]
// where nothing is checked), or false when it would be too large.
bool make_argument(const ParamSignature& s, Value* out) {
  std::vector<int64_t> shape;
  if (s.ndim < 0) shape.push_back(2);
  for (size_t i = 0; i < s.dims.size(); ++i) shape.push_back(dimension(s, i));
  DLDataType dtype = s.dtype.bits == 0 ? DLDataType{kDLFloat, 32, 1} : s.dtype;
  if (dtype.lanes == 0) dtype.lanes = 1;
  int64_t bytes = (int64_t{dtype.bits} * dtype.lanes + 7) / 8;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d > 0 && bytes > kMaxArgumentBytes / d) return false;
    bytes *= d;
  }
  if (bytes > kMaxArgumentBytes) return false;
  graphrt::NDArray t = graphrt::NDArray::empty(shape, dtype, DLDevice{kDLCPU, 0});
  if (t.nbytes()) std::fill_n(static_cast<uint8_t*>(t->data), t.nbytes(), uint8_t{1});
  *out = std::move(t);
  return true;
}

// Runs VM function `f` twice with arguments from its signature; errors are expected.
void run_function(VirtualMachine& vm, int64_t f) {
  try {
    const std::vector<ParamSignature> params = param_signatures(vm.executable(), f);
    std::vector<Value> args(params.size());
    for (size_t i = 0; i < params.size(); ++i)
      if (!make_argument(params[i], &args[i])) return;
    std::vector<const Value*> argv;
    for (const Value& a : args) argv.push_back(&a);
    for (int round = 0; round < 2; ++round) {
      try {
        Value result = vm.call(f, argv.data(), static_cast<int>(argv.size()));
        graphrt::RetValue ret;
        value_to_ret(result, &ret);
      } catch (const graphrt::Error&) {
      }
    }
  } catch (const graphrt::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<const LinkedExecutable> linked;
  try {
    auto exe = std::make_shared<Executable>(read_executable(data, size, "relax.VMExecutable"));
    verify_executable(*exe);
    const graphrt::PackedFunc stub = graphrt::make_function([](const graphrt::TVMArgs&, graphrt::RetValue*) {}, "stub");
    linked = link_executable(exe, [&](const std::string&) { return stub; });
  } catch (const graphrt::Error&) {
    return 0;
  }
  // Both allocators: the pooled one (with its storage cache) and the naive one.
  const bool pooled = size == 0 || (data[size - 1] & 1) == 0;
  VirtualMachine vm(linked, StoragePool::create(pooled, kMaxStorage));
  vm.set_instruction_budget(kInstructionBudget);
  size_t run = 0;
  const auto& functions = linked->exe->functions;
  for (size_t f = 0; f < functions.size() && run < kMaxFunctionsRun; ++f) {
    if (functions[f].kind != FunctionKind::kVMFunc) continue;
    run_function(vm, static_cast<int64_t>(f));
    ++run;
  }
  return 0;
}
