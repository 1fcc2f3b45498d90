// The Relax VM interpreter: runs a linked executable's VM functions over
// register frames, calling builtins natively and everything else through the
// packed convention. One instance is one TVM VirtualMachine: its frames and
// storage pool are reused from call to call, and it is not for concurrent
// calls (make one per thread, as with TVM).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graphrt/device_api.h"
#include "backends/relax/linked_executable.h"
#include "backends/relax/recycler.h"
#include "backends/relax/storage_cache.h"

namespace graphrt {
namespace relax {

// Instructions one call may execute before it stops (0 = unlimited). Relax
// code has no loops, so a real model executes a few thousand; a hostile
// executable looping or recursing through closures is stopped within a
// second or so. Work that grows with the data counts too, one instruction
// per kWorkPerInstruction units (arguments, registers, dimensions or elements
// a builtin walks, 8-byte words it fills or copies), so that a loop of
// costly instructions is stopped as soon.
constexpr uint64_t kDefaultInstructionBudget = 100000000;
constexpr uint64_t kWorkPerInstruction = 8;
// Nested VM function calls deeper than this are refused, and so are calls
// that builtins make (invoke_closure, call_tir_dyn) nested deeper.
constexpr int kMaxCallDepth = 512;
// The registers of all the frames of one call stack together: a frame beyond
// it is refused (a register file may have 2^20 registers, the depth 512).
constexpr int64_t kMaxLiveRegisters = int64_t{1} << 22;

class VirtualMachine {
 public:
  VirtualMachine(std::shared_ptr<const LinkedExecutable> linked, std::shared_ptr<StoragePool> pool);
  ~VirtualMachine();
  VirtualMachine(const VirtualMachine&) = delete;
  VirtualMachine& operator=(const VirtualMachine&) = delete;

  // Calls function-table entry `function` (any kind) with `args`.
  Value call(int64_t function, const Value* const* args, int num_args);
  // Calls a closure or packed function value with `args` (then its bound arguments).
  Value call_value(const Value& callee, const Value* const* args, int num_args);

  const Executable& executable() const { return *linked_->exe; }
  // The devices of vm_initialization, the host last (TVM's order): alloc_storage's
  // device index points into them. With a device before the host, the tensor
  // constants are copied to the first device (as TVM does at initialisation).
  void set_devices(std::vector<DLDevice> devices);
  const std::vector<DLDevice>& devices() const { return devices_; }
  // The device APIs of devices(), resolved from the executable's runtime when
  // the devices are set: what the VM and its builtins allocate and copy through.
  const DeviceApis& device_apis() const { return apis_; }
  // The runtime the executable was loaded through (its global functions).
  const Runtime& runtime() const { return apis_.runtime(); }
  // Storage of `nbytes` on devices()[index] (not the host): an idle one of
  // that size made before, else new.
  Ref<StorageObj> device_storage(size_t index, int64_t nbytes);
  const LinkedExecutable& linked() const { return *linked_; }
  StoragePool& pool() { return storages_.pool(); }
  StorageCache& storages() { return storages_; }
  // make_shape's, make_tuple's and reshape's objects, made again only when all are held.
  Recycler& recycler() { return recycler_; }
  // Per-callee call counts and wall time while `on` (reset when turned on);
  // off by default, and then the hot loop does no timing.
  struct CallStats {
    uint64_t calls = 0;
    double seconds = 0;
  };
  void set_profiling(bool on);
  // One entry per function-table index.
  const std::vector<CallStats>& call_stats() const { return stats_; }
  // With profiling on, also each call's start and duration, in the order
  // calls end (a VM function after the calls it made); reset when turned on.
  struct TraceEvent {
    int32_t function;  // function-table index
    int depth;         // VM call depth of the caller (0: the entry function)
    double start_us;   // since tracing was turned on
    double duration_us;
  };
  void set_tracing(bool on);
  const std::vector<TraceEvent>& trace_events() const { return events_; }
  // TVM's set_instrument: `f(func, func_symbol, before_run, ret_value, args...)`
  // is called before and after every Call instruction (dtype arguments as
  // strings, as TVM passes them); a before-call result of 1 (SKIP_RUN) skips
  // the call and leaves its result None. A null `f` turns it off.
  void set_instrument(PackedFunc f);
  const PackedFunc& instrument() const { return instrument_; }
  void set_instruction_budget(uint64_t budget) { budget_ = budget; }
  // Counts `units` of work (see kWorkPerInstruction) against the running
  // call's budget; throws kResourceExhausted, naming `what`, when it is spent.
  void charge(uint64_t units, const char* what) {
    const uint64_t cost = units / kWorkPerInstruction;
    if (cost >= remaining_) budget_exhausted(what);
    remaining_ -= cost;
  }
  uint64_t instruction_budget() const { return budget_; }

  // Per-VM state of a builtin family (TVM's VM extensions, e.g. the CUDA-graph
  // caches): made on first use, dropped before the VM's storages and frames.
  struct Extension {
    virtual ~Extension() = default;
  };
  // The family's state (`key`: an address the family owns; T its type), made on first use.
  template <typename T>
  T& extension(const void* key) {
    for (auto& e : extensions_)
      if (e.first == key) return static_cast<T&>(*e.second);
    extensions_.emplace_back(key, std::make_unique<T>());
    return static_cast<T&>(*extensions_.back().second);
  }

 private:
  struct Frame;
  Value run(int32_t function, const Value* const* args, int num_args);
  Value run_loop(const FunctionInfo& f, Frame& frame);
  void dispatch(int32_t function, const Value* const* args, int num_args, Value* ret);
  void timed_dispatch(int32_t function, const Value* const* args, int num_args, Value* ret);
  // A Call while profiling or instrumented (instrument.cc).
  void observed_dispatch(int32_t function, const Value* const* args, int num_args, Value* ret);
  Value callee_value(int32_t function) const;
  [[noreturn]] void budget_exhausted(const char* what) const;
  [[noreturn]] void deadline_passed(const FunctionInfo& f, int64_t pc, const Instr& in) const;
  Frame& push_frame(size_t registers);
  void pop_frame();

  std::shared_ptr<const LinkedExecutable> linked_;
  StorageCache storages_;
  Recycler recycler_;  // after storages_: destroyed first, its views before their storage
  std::vector<DLDevice> devices_{DLDevice{kDLCPU, 0}};
  DeviceApis apis_;  // of devices_
  std::vector<Value> device_literals_;  // the program's literals with tensors on devices_[0]
  const Value* literals_;               // the program's, or device_literals_
  std::vector<std::unordered_map<int64_t, std::vector<Ref<StorageObj>>>> device_storages_;
  std::vector<std::unique_ptr<Frame>> frames_;
  int depth_ = 0;
  int nested_calls_ = 0;        // call()s under way (builtins call back into the VM)
  // The thread whose call() is under way (none between calls): a VM is one call stack, so a
  // second thread's call is refused instead of sharing its registers and storage.
  std::atomic<std::thread::id> calling_thread_{};
  int64_t live_registers_ = 0;  // registers of the frames pushed
  uint64_t budget_ = kDefaultInstructionBudget;
  uint64_t remaining_ = 0;
  bool profiling_ = false;
  bool observed_ = false;  // profiling_ or an instrument: Calls take observed_dispatch
  PackedFunc instrument_;
  std::vector<CallStats> stats_;
  bool tracing_ = false;
  std::chrono::steady_clock::time_point trace_origin_;
  std::vector<TraceEvent> events_;
  // Last: destroyed first, while the storages its values came from still exist.
  std::vector<std::pair<const void*, std::unique_ptr<Extension>>> extensions_;
};

}  // namespace relax
}  // namespace graphrt
