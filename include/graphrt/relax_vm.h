// Relax VM executables (what TVM's relax.build(...).export_library writes)
// from C++, typed: load one, call its functions with NDArrays, get a tensor
// or a (nested) tuple back.
//
//   graphrt::RelaxVM vm = graphrt::RelaxVM::load("deploy_relax.so");
//   graphrt::Value y = vm.call("main", {x});
//   graphrt::NDArray out = y.tensor;          // y.items[i] for a tuple
//
// Over the VM module's packed functions, the calls TVM's own deploy code makes
// (vm_load_executable, vm_initialization, functions by name): they are made in
// the session layer (session/relax_vm.cc), not in this header, so that no
// public header calls a function by name outside TVM's faces. One RelaxVM is
// one TVM VirtualMachine: its storage is reused from call to call, so call it
// from one thread at a time and make one per thread over the same executable
// module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/runtime.h"
#include "graphrt/session.h"
#include "graphrt/value.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

// A Relax function's result (a tensor, a nested tuple, a shape, an int or float, nothing, or
// another object: a closure, a KV cache): the core's Value (graphrt/value.h), which reads
// tuples and shapes with no call by name.
using RelaxValue = Value;

// What a Relax function's code checks of a parameter (its prologue's
// check_tensor_info and match_shape): the one typed form of it, read from the
// VM module's get_function_param_spec record.
struct RelaxParamSpec {
  bool tensor = false;            // checked as a tensor
  DLDataType dtype{0, 0, 0};      // bits 0: any dtype
  int64_t ndim = -1;              // -1: any rank
  std::vector<int64_t> dims;      // one per dimension when the rank is known: the size, -1 where not fixed
  std::vector<int64_t> symbols;   // one per dimension: the symbolic variable's slot (same slot, same size), else -1

  // A tensor of known dtype and rank: enough to make one.
  bool known() const { return tensor && dtype.bits != 0 && ndim >= 0; }

  // The record [tensor, dtype code, bits, lanes, ndim, dims[ndim], symbols[ndim]]
  // (backends/relax/param_signature.h, signature_record, writes it).
  static RelaxParamSpec from_record(const NDArray& record) {
    const DLTensor* t = record.handle();
    const int64_t n = t->ndim == 1 ? t->shape[0] : -1;
    if (t->dtype.code != kDLInt || t->dtype.bits != 64 || n < 5)
      throw Error(ErrorKind::kInternal, "RelaxParamSpec: get_function_param_spec returned no int64 record");
    const int64_t* v = reinterpret_cast<const int64_t*>(static_cast<const char*>(t->data) + t->byte_offset);
    RelaxParamSpec s;
    s.tensor = v[0] != 0;
    s.dtype = DLDataType{static_cast<uint8_t>(v[1]), static_cast<uint8_t>(v[2]), static_cast<uint16_t>(v[3])};
    s.ndim = v[4];
    const int64_t rank = s.ndim > 0 ? s.ndim : 0;
    if (n != 5 + 2 * rank)
      throw Error(ErrorKind::kInternal, "RelaxParamSpec: a record of " + std::to_string(n) + " values for rank " +
                                            std::to_string(s.ndim));
    s.dims.assign(v + 5, v + 5 + rank);
    s.symbols.assign(v + 5 + rank, v + 5 + 2 * rank);
    return s;
  }
};

class RelaxVM {
 public:
  // TVM's allocator kinds (vm_initialization's third argument).
  enum class Allocator : int { kNaive = 1, kPooled = 2 };

  // Loads a Relax export (relax.VMExecutable, or relax.Executable before TVM v0.20).
  static RelaxVM load(const std::string& path, const LoadOptions& options = {},
                      Allocator allocator = Allocator::kPooled) {
    return RelaxVM(load_module(path, options), allocator);
  }

  // A VM over `executable`, the module load_module returned for a Relax export.
  explicit RelaxVM(Module executable, Allocator allocator = Allocator::kPooled)
      : RelaxVM(std::move(executable), cpu(), allocator) {}
  // A VM whose tensors live on `device` (a device other than the CPU first, the host
  // last, as TVM's VirtualMachine lists them); the arguments of call() must be there.
  RelaxVM(Module executable, DLDevice device, Allocator allocator = Allocator::kPooled);
  // The same for an executable loaded through `runtime`. The VM's devices are those of the
  // runtime the executable was loaded through, and results are read by the core's Value,
  // whatever the runtime: the argument stays for the callers that name it.
  RelaxVM(Module executable, DLDevice device, Allocator allocator, Runtime& /*runtime*/)
      : RelaxVM(std::move(executable), device, allocator) {}

  const Module& executable() const { return exe_; }

  // The VM module (TVM's VirtualMachine): set_input, invoke_stateful, ... by name.
  const Module& module() const { return vm_; }

  // The executable's VM functions ("main", ...).
  std::vector<std::string> functions() const { return model_functions(vm_); }
  // The functions of VM module `vm` that are the executable's own, not the
  // module's interface (set_input, get_output, ...).
  static std::vector<std::string> model_functions(const Module& vm);
  std::vector<std::string> param_names(const std::string& function) const;
  // What the function's code checks of parameter `index`: "float32[n0, 784]"
  // (n<k>: a symbolic dimension, the same k the same size), "float32[...]"
  // (any rank), "?" (nothing checked).
  std::string param_signature(const std::string& function, int64_t index) const;
  // The same, typed.
  RelaxParamSpec param_spec(const std::string& function, int64_t index) const;

  // VM function `name` to call with any packed arguments (objects, shapes, ...); a
  // kNotFound Error naming it when the executable has no such function.
  PackedFunc function(const std::string& name) const;
  // The executable's own listing: its counts and constants (dtype and shape), and its code.
  std::string executable_stats() const;
  std::string executable_text() const;

  Value call(const std::string& function, const std::vector<NDArray>& args);
  // The per-callee table (kernels, builtins, VM functions) of one call.
  std::string profile(const std::string& function, const std::vector<NDArray>& args);
  // One call as a Chrome trace (JSON).
  std::string trace(const std::string& function, const std::vector<NDArray>& args);
  // TVM's VirtualMachine.set_instrument: `instrument(func, func_symbol, before_run,
  // ret_value, args...)` before and after every call the VM makes; returning 1
  // before a call skips it. A null function turns it off.
  void set_instrument(const PackedFunc& instrument);
  // Instructions one call may execute (0: unlimited; default 100,000,000).
  void set_instruction_budget(uint64_t n);

 private:
  Module exe_;
  Module vm_;
};

}  // namespace graphrt

#pragma GCC visibility pop
