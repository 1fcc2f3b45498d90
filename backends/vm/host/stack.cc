#include "backends/vm/host/stack.h"

#include "graphrt/error.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/host/module.h"

namespace graphrt {
namespace vm {

namespace {
// Watched by stacks that have no interrupt source; never moves.
const Interrupt& no_interrupt() {
  static const Interrupt never;
  return never;
}
}  // namespace

Stack::Stack()
    : budget_(limits().instruction_budget),
      initial_budget_(budget_),
      interrupt_(&no_interrupt().epoch()) {
  frames_.reserve(16);
  i32.reserve(256);
}

Frame& Stack::push(FrameType type, const VmModule* module, uint32_t function) {
  if (frames_.size() >= static_cast<size_t>(limits().max_stack_depth)) {
    throw Error(ErrorKind::kResourceExhausted, "VM stack overflow").with("depth", std::to_string(frames_.size()));
  }
  Frame frame;
  frame.type = type;
  frame.module = module;
  frame.function = function;
  frame.i32_base = static_cast<uint32_t>(i32.size());
  frame.i64_base = static_cast<uint32_t>(i64.size());
  frame.f32_base = static_cast<uint32_t>(f32.size());
  frame.f64_base = static_cast<uint32_t>(f64.size());
  frame.ref_base = static_cast<uint32_t>(refs.size());
  frames_.push_back(frame);
  return frames_.back();
}

void Stack::pop() {
  const Frame& f = frames_.back();
  // Shrinking the pools releases the frame's refs.
  i32.resize(f.i32_base);
  i64.resize(f.i64_base);
  f32.resize(f.f32_base);
  f64.resize(f.f64_base);
  refs.resize(f.ref_base);
  frames_.pop_back();
}

std::string Stack::backtrace() const {
  std::string out;
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (!out.empty()) out += " <- ";
    out += (it->module ? it->module->name() : std::string("?")) + "#" + std::to_string(it->function);
    if (it->type == FrameType::kBytecode) out += "@" + std::to_string(it->pc);
  }
  return out;
}

void Stack::throw_stopped() const {
  if (budget_ == 0) {
    throw Error(ErrorKind::kResourceExhausted, "VM instruction budget exhausted (" + std::to_string(initial_budget_) +
                " branches and calls; raise it with GRAPHRT_VM_BUDGET or the host's budget option)")
        .with("budget", std::to_string(initial_budget_));
  }
  throw Error(ErrorKind::kInterrupted, "VM invocation interrupted");
}

int VmModule::lookup_export(const std::string& name) const {
  const std::vector<ExportDecl>& list = exports();
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

void invoke_function(Stack& stack, const FunctionRef& fn, const std::vector<Value>& args,
                   std::vector<Value>* results) {
  GRAPHRT_CHECK_KIND(fn.resolved(), ErrorKind::kNotFound, "call of an unresolved (optional) import");
  fn.module->call(stack, *fn.state, fn.ordinal, args, results);
}

}  // namespace vm
}  // namespace graphrt
