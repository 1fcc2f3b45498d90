#include "backends/relax/interpreter.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "graphrt/run_deadline.h"
#include "backends/relax/packed_convention.h"

namespace graphrt {
namespace relax {

struct VirtualMachine::Frame {
  std::vector<Value> registers;   // all None between calls
  std::vector<const Value*> argv; // a Call's arguments, reused
  size_t used = 0;                // registers of the call that has it
};

VirtualMachine::VirtualMachine(std::shared_ptr<const LinkedExecutable> linked, std::shared_ptr<StoragePool> pool)
    : linked_(std::move(linked)),
      storages_(std::move(pool)),
      apis_(linked_->runtime_or_default(), devices_),
      literals_(linked_->program.literals.data()) {}

void VirtualMachine::set_devices(std::vector<DLDevice> devices) {
  if (devices.empty()) throw Error("a Relax VM needs at least one device");
  devices_ = std::move(devices);
  apis_ = DeviceApis(apis_.runtime(), devices_);
  device_storages_.assign(devices_.size(), {});
  device_literals_.clear();
  literals_ = linked_->program.literals.data();
  if (devices_.front().device_type == kDLCPU) return;
  device_literals_ = linked_->program.literals;
  for (Value& v : device_literals_)
    if (NDArray* t = std::get_if<NDArray>(&v)) *t = apis_.copy_to_device(*t, devices_.front());
  literals_ = device_literals_.data();
}

Ref<StorageObj> VirtualMachine::device_storage(size_t index, int64_t nbytes) {
  std::vector<Ref<StorageObj>>& kept = device_storages_.at(index)[nbytes];
  for (const Ref<StorageObj>& s : kept)
    if (s->idle()) return s;
  if (kept.size() >= StorageCache::kMaxKeptPerSize) kept.erase(kept.begin());
  kept.push_back(make_ref<StorageObj>(apis_.empty({nbytes}, DLDataType{kDLUInt, 8, 1}, devices_[index])));
  return kept.back();
}

VirtualMachine::~VirtualMachine() = default;

namespace {
// A frame's registers are kept for the next call at its depth up to this
// many; a larger file is freed when its call returns.
constexpr size_t kKeptFrameRegisters = 16384;
}  // namespace

void VirtualMachine::budget_exhausted(const char* what) const {
  throw Error(ErrorKind::kResourceExhausted, "Relax VM instruction budget of " + std::to_string(budget_) + " exhausted" +
                                                 (*what ? std::string(" (by ") + what + ")" : std::string()));
}

void VirtualMachine::deadline_passed(const FunctionInfo& f, int64_t pc, const Instr& in) const {
  std::string where = "instruction " + std::to_string(pc - f.start_instr) + " of " + quote_untrusted(f.name);
  if (in.op == Opcode::kCall) where += ", a call of " + quote_untrusted(linked_->exe->functions[static_cast<size_t>(in.func)].name);
  throw Error(ErrorKind::kInterrupted, "Relax VM run interrupted: its deadline passed before " + where)
      .with("function", f.name)
      .with("instruction", std::to_string(pc - f.start_instr));
}

VirtualMachine::Frame& VirtualMachine::push_frame(size_t registers) {
  if (depth_ >= kMaxCallDepth)
    throw Error(ErrorKind::kResourceExhausted, "Relax VM call depth exceeds " + std::to_string(kMaxCallDepth));
  if (static_cast<int64_t>(registers) > kMaxLiveRegisters - live_registers_)
    throw Error(ErrorKind::kResourceExhausted, "Relax VM calls would hold more than " + std::to_string(kMaxLiveRegisters) +
                                                   " registers at once (" + std::to_string(registers) + " more at depth " +
                                                   std::to_string(depth_) + ")");
  charge(registers, "a register file");
  if (static_cast<size_t>(depth_) == frames_.size()) frames_.push_back(std::make_unique<Frame>());
  Frame& frame = *frames_[static_cast<size_t>(depth_++)];
  if (frame.registers.size() < registers) frame.registers.resize(registers);
  frame.used = registers;
  live_registers_ += static_cast<int64_t>(registers);
  return frame;
}

void VirtualMachine::pop_frame() {
  Frame& frame = *frames_[static_cast<size_t>(--depth_)];
  live_registers_ -= static_cast<int64_t>(frame.used);
  // Dropping the values now returns their storage to the pool for the next call.
  if (frame.registers.size() > kKeptFrameRegisters) {
    std::vector<Value>().swap(frame.registers);
  } else {
    std::fill(frame.registers.begin(), frame.registers.begin() + static_cast<std::ptrdiff_t>(frame.used), Value());
  }
}

Value VirtualMachine::call(int64_t function, const Value* const* args, int num_args) {
  const auto& functions = linked_->exe->functions;
  if (function < 0 || function >= static_cast<int64_t>(functions.size()))
    throw Error(ErrorKind::kOutOfRange, "function index " + std::to_string(function) + " outside the table");
  const FunctionInfo& f = functions[static_cast<size_t>(function)];
  if (f.kind == FunctionKind::kVMFunc && f.num_args != num_args)
    throw Error(ErrorKind::kTypeMismatch, "Relax function " + quote_untrusted(f.name) + " takes " + std::to_string(f.num_args) + " arguments, " +
                std::to_string(num_args) + " given")
        .with("function", f.name);
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id caller{};
  const bool outermost = calling_thread_.compare_exchange_strong(caller, me, std::memory_order_acquire);
  if (!outermost && caller != me)
    throw Error(ErrorKind::kFailedPrecondition,
                "the Relax VM is running a call of another thread (a VM runs one call at a time: make one VM per "
                "thread)")
        .with("function", f.name);
  struct EndCall {
    std::atomic<std::thread::id>* calling;
    bool outermost;
    ~EndCall() {
      if (outermost) calling->store(std::thread::id{}, std::memory_order_release);
    }
  } end_call{&calling_thread_, outermost};
  if (depth_ == 0 && nested_calls_ == 0) {
    remaining_ = budget_ ? budget_ : ~uint64_t{0};
    recycler_.release_idle();  // what the last call's kept objects held goes back first
  }
  if (nested_calls_ >= kMaxCallDepth)
    throw Error(ErrorKind::kResourceExhausted, "Relax VM calls nest deeper than " + std::to_string(kMaxCallDepth));
  struct Nest {
    int* n;
    explicit Nest(int* count) : n(count) { ++*n; }
    ~Nest() { --*n; }
  } nest(&nested_calls_);
  RunningDeviceApis kernels_use(apis_);
  Value ret;
  dispatch(static_cast<int32_t>(function), args, num_args, &ret);
  return ret;
}

Value VirtualMachine::call_value(const Value& callee, const Value* const* args, int num_args) {
  if (const PackedFunc* f = std::get_if<PackedFunc>(&callee)) {
    Value ret;
    call_packed(*f, args, num_args, &ret);
    return ret;
  }
  const auto* closure = std::get_if<Ref<ClosureObj>>(&callee);
  if (!closure) throw Error(ErrorKind::kTypeMismatch, std::string("cannot call a ") + value_kind_name(callee));
  const ClosureObj& c = **closure;
  std::vector<const Value*> all(args, args + num_args);
  for (const Value& b : c.bound) all.push_back(&b);
  if (c.function < 0) {
    Value ret;
    call_packed(c.packed, all.data(), static_cast<int>(all.size()), &ret);
    return ret;
  }
  return call(c.function, all.data(), static_cast<int>(all.size()));
}

void VirtualMachine::dispatch(int32_t function, const Value* const* args, int num_args, Value* ret) {
  const Callee& c = linked_->callees[static_cast<size_t>(function)];
  switch (c.kind) {
    case Callee::kBuiltin:
      return c.builtin(*this, BuiltinArgs(linked_->exe->functions[static_cast<size_t>(function)].name.c_str(), args, num_args), ret);
    case Callee::kPacked:
      return call_packed(c.packed, args, num_args, ret);
    case Callee::kVMFunction:
      *ret = run(function, args, num_args);
      return;
  }
}

void VirtualMachine::set_profiling(bool on) {
  profiling_ = on;
  observed_ = profiling_ || static_cast<bool>(instrument_);
  if (on) stats_.assign(linked_->exe->functions.size(), CallStats());
}

void VirtualMachine::set_tracing(bool on) {
  tracing_ = on;
  if (on) {
    events_.clear();
    trace_origin_ = std::chrono::steady_clock::now();
  }
}

void VirtualMachine::timed_dispatch(int32_t function, const Value* const* args, int num_args, Value* ret) {
  const int depth = depth_;
  const auto t0 = std::chrono::steady_clock::now();
  dispatch(function, args, num_args, ret);
  const auto t1 = std::chrono::steady_clock::now();
  CallStats& s = stats_[static_cast<size_t>(function)];
  ++s.calls;
  s.seconds += std::chrono::duration<double>(t1 - t0).count();
  if (tracing_)
    events_.push_back(TraceEvent{function, depth - 1, std::chrono::duration<double, std::micro>(t0 - trace_origin_).count(),
                                 std::chrono::duration<double, std::micro>(t1 - t0).count()});
}

Value VirtualMachine::run(int32_t function, const Value* const* args, int num_args) {
  const FunctionInfo& f = linked_->exe->functions[static_cast<size_t>(function)];
  Frame& frame = push_frame(static_cast<size_t>(f.register_file_size));
  struct Pop {
    VirtualMachine* vm;
    ~Pop() { vm->pop_frame(); }
  } pop{this};
  for (int i = 0; i < num_args; ++i) frame.registers[static_cast<size_t>(i)] = *args[i];
  return run_loop(f, frame);
}

Value VirtualMachine::run_loop(const FunctionInfo& f, Frame& frame) {
  const Program& program = linked_->program;
  const Instr* code = program.code.data();
  const Operand* operands = program.args.data();
  const Value* literals = literals_;
  Value* regs = frame.registers.data();
  int64_t pc = f.start_instr;
  // A run deadline (graphrt/run_deadline.h) is checked before every call and every 4096
  // instructions. Whether there is one cannot change during the run (only a scope around it
  // sets one), so a run without one tests a register, not the thread's deadline.
  const bool has_deadline = run_deadline_set();
  try {
    for (;;) {
      if (--remaining_ == 0) budget_exhausted("");
      const Instr& in = code[pc];
      if (has_deadline && (in.op == Opcode::kCall || (remaining_ & 4095) == 0) && run_deadline_passed())
        deadline_passed(f, pc, in);
      switch (in.op) {
        case Opcode::kCall: {
          charge(in.num_args, "a call's arguments");
          if (frame.argv.size() < in.num_args) frame.argv.resize(in.num_args);
          const Value** argv = frame.argv.data();
          const Operand* ops = operands + in.arg_begin;
          for (uint32_t k = 0; k < in.num_args; ++k) argv[k] = ops[k] >= 0 ? &regs[ops[k]] : &literals[~ops[k]];
          Value result;
          if (observed_) {
            observed_dispatch(in.func, argv, static_cast<int>(in.num_args), &result);
          } else {
            dispatch(in.func, argv, static_cast<int>(in.num_args), &result);
          }
          if (in.dst != kDiscard) regs[in.dst] = std::move(result);
          ++pc;
          break;
        }
        case Opcode::kRet:
          return in.operand >= 0 ? std::move(regs[in.operand]) : literals[~in.operand];
        case Opcode::kGoto:
          pc += in.offset;
          break;
        case Opcode::kIf: {
          const int64_t* cond = std::get_if<int64_t>(&regs[in.operand]);
          if (!cond)
            throw Error(ErrorKind::kTypeMismatch, std::string("If condition is a ") + value_kind_name(regs[in.operand]) +
                                                      ", not an int");
          pc += *cond != 0 ? 1 : in.offset;
          break;
        }
      }
    }
  } catch (Error& e) {
    if (!e.context_value("function").empty()) throw;
    const Instr& in = code[pc];
    Error outer(e.kind(), "in Relax function " + quote_untrusted(f.name) +
                              (in.op == Opcode::kCall ? " calling " + quote_untrusted(linked_->exe->functions[static_cast<size_t>(in.func)].name) : "") +
                              ": " + e.message());
    for (const auto& kv : e.context()) outer.with(kv.first, kv.second);
    throw outer.with("function", f.name).with("instruction", std::to_string(pc));
  }
}

}  // namespace relax
}  // namespace graphrt
