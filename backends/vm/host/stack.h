// graphrt::vm::Stack — the fiber stack of one invocation.
//
// Holds the frames (for depth limits and backtraces) and the register pools
// that bytecode frames carve their typed banks from. Internal bytecode calls
// push frames here without host recursion; cross-module calls recurse on the
// host but still count against the same depth limit and instruction budget.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/vm/host/interrupt.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/host/ref.h"

namespace graphrt {
namespace vm {

class VmModule;
class BytecodeModule;

// Called before every bytecode instruction of a traced invocation with the
// module, internal function ordinal and byte offset (graphrt-vm-run --trace).
using Tracer = std::function<void(const BytecodeModule& module, uint32_t function, uint32_t pc)>;

enum class FrameType { kNative, kBytecode };

struct Frame {
  FrameType type = FrameType::kNative;
  const VmModule* module = nullptr;
  uint32_t function = 0;  // internal ordinal (bytecode) or export ordinal (native)
  uint32_t pc = 0;        // bytecode offset of the current instruction
  // Base index of this frame's registers in each pool.
  uint32_t i32_base = 0, i64_base = 0, f32_base = 0, f64_base = 0, ref_base = 0;
  // Where the caller wants results (offset of the call's result register
  // list), for bytecode->bytecode internal calls.
  uint32_t result_list_pc = 0;
};

class Stack {
 public:
  // Starts with limits().instruction_budget and no interrupt source.
  Stack();

  // Instruction budget: counted on branches and calls (every loop and every
  // recursion passes one), so a runaway program stops with an Error.
  void set_budget(uint64_t budget) { budget_ = initial_budget_ = budget; }
  uint64_t budget() const { return budget_; }
  // Stops this invocation when `interrupt` is requested after this call.
  void watch(const Interrupt& interrupt) {
    interrupt_ = &interrupt.epoch();
    start_epoch_ = interrupt_->load(std::memory_order_relaxed);
  }
  // Tracing (slower dispatch loop) while set; null to stop.
  void set_tracer(const Tracer* tracer) { tracer_ = tracer; }
  const Tracer* tracer() const { return tracer_; }
  // Called on every branch and call: the one place where a running program
  // can be stopped.
  void consume_budget() {
    if (budget_ == 0 || interrupt_->load(std::memory_order_relaxed) != start_epoch_) throw_stopped();
    --budget_;
  }
  // Bulk work: one unit per Limits::kBytesPerBudgetUnit bytes (at least one),
  // so one instruction that fills a large buffer costs what its work does.
  void consume_bytes(int64_t bytes) {
    const uint64_t units = bytes > 0 ? static_cast<uint64_t>(bytes / Limits::kBytesPerBudgetUnit) + 1 : 1;
    if (budget_ < units) {
      budget_ = 0;
      throw_stopped();
    }
    consume_budget();  // the interrupt check, and one of the units
    budget_ -= units - 1;
  }

  Frame& push(FrameType type, const VmModule* module, uint32_t function);
  void pop();
  Frame& top() { return frames_.back(); }
  size_t depth() const { return frames_.size(); }
  const std::vector<Frame>& frames() const { return frames_; }
  // "module.function@pc <- ..." innermost first, for error context.
  std::string backtrace() const;

  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<VmRef> refs;

 private:
  [[noreturn]] void throw_stopped() const;
  std::vector<Frame> frames_;
  uint64_t budget_;
  uint64_t initial_budget_;
  const std::atomic<uint64_t>* interrupt_;
  uint64_t start_epoch_ = 0;
  const Tracer* tracer_ = nullptr;
};

// Pops the frame it pushed, also during unwinding.
class FrameScope {
 public:
  FrameScope(Stack& stack, FrameType type, const VmModule* module, uint32_t function)
      : stack_(stack) {
    stack_.push(type, module, function);
  }
  ~FrameScope() { stack_.pop(); }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;

 private:
  Stack& stack_;
};

}  // namespace vm
}  // namespace graphrt
