#include "backends/vm/bytecode/bytecode_interpreter.h"

#include <cmath>
#include <new>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "graphrt/error.h"
#include "backends/vm/host/buffer.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/host/list.h"
#include "backends/vm/bytecode/opcodes.h"

// Computed goto is a GNU extension that GCC and clang both accept in C++17
// mode; it saves the switch's bounds check and gives each opcode its own
// indirect branch (better prediction). Other compilers take the switch.
#if defined(__GNUC__) && !defined(GRAPHRT_VM_FORCE_SWITCH)
#define GRAPHRT_VM_COMPUTED_GOTO 1
#else
#define GRAPHRT_VM_COMPUTED_GOTO 0
#endif

namespace graphrt {
namespace vm {
namespace {

template <typename T>
inline T rd(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// --- integer helpers: wrapping arithmetic without signed-overflow UB.
template <typename T>
using U = std::make_unsigned_t<T>;
template <typename T> inline T wadd(T a, T b) { return static_cast<T>(static_cast<U<T>>(a) + static_cast<U<T>>(b)); }
template <typename T> inline T wsub(T a, T b) { return static_cast<T>(static_cast<U<T>>(a) - static_cast<U<T>>(b)); }
template <typename T> inline T wmul(T a, T b) { return static_cast<T>(static_cast<U<T>>(a) * static_cast<U<T>>(b)); }
template <typename T> inline T wneg(T a) { return static_cast<T>(U<T>(0) - static_cast<U<T>>(a)); }
template <typename T> inline T wabs(T a) { return a < 0 ? wneg(a) : a; }
template <typename T> inline T shift_mask(T amount) { return amount & static_cast<T>(sizeof(T) * 8 - 1); }
template <typename T> inline T wshl(T a, T n) { return static_cast<T>(static_cast<U<T>>(a) << shift_mask(n)); }
template <typename T> inline T wshrs(T a, T n) { return static_cast<T>(a >> shift_mask(n)); }
template <typename T> inline T wshru(T a, T n) { return static_cast<T>(static_cast<U<T>>(a) >> shift_mask(n)); }

[[noreturn]] void trap_div() { throw Error("integer division by zero"); }
template <typename T> inline T sdiv(T a, T b) {
  if (b == 0) trap_div();
  if (b == -1) return wneg(a);  // MIN / -1 wraps to MIN instead of trapping the host
  return a / b;
}
template <typename T> inline T srem(T a, T b) {
  if (b == 0) trap_div();
  return b == -1 ? 0 : a % b;
}
template <typename T> inline T udiv(T a, T b) {
  if (b == 0) trap_div();
  return static_cast<T>(static_cast<U<T>>(a) / static_cast<U<T>>(b));
}
template <typename T> inline T urem(T a, T b) {
  if (b == 0) trap_div();
  return static_cast<T>(static_cast<U<T>>(a) % static_cast<U<T>>(b));
}
template <typename T> inline int32_t ult(T a, T b) { return static_cast<U<T>>(a) < static_cast<U<T>>(b); }
template <typename T> inline int32_t ule(T a, T b) { return static_cast<U<T>>(a) <= static_cast<U<T>>(b); }

// Float -> int conversion saturates and maps NaN to 0 (C++ leaves both UB).
template <typename I, typename F>
inline I sat(F v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}
template <typename To, typename From>
inline To bitcast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bitcast size");
  To out;
  std::memcpy(&out, &v, sizeof(To));
  return out;
}

// --- typed ref access.
List& as_list(const VmRef& ref) {
  List* list = ref_as<List>(ref);
  if (!list) throw Error(ErrorKind::kTypeMismatch, ref ? "ref is not a list" : "null list ref");
  return *list;
}
Buffer& as_buffer(const VmRef& ref) {
  Buffer* buffer = ref_as<Buffer>(ref);
  if (!buffer) throw Error(ErrorKind::kTypeMismatch, ref ? "ref is not a buffer" : "null buffer ref");
  return *buffer;
}
template <typename T>
T buffer_load(const VmRef& ref, int64_t offset) {
  return rd<T>(as_buffer(ref).range(offset, sizeof(T)));
}
template <typename T>
void buffer_store(const VmRef& ref, int64_t offset, T value) {
  std::memcpy(as_buffer(ref).writable_range(offset, sizeof(T)), &value, sizeof(T));
}
VmRef buffer_alloc(int64_t length) {
  if (length < 0 || length > limits().max_buffer_bytes) {
    throw Error(ErrorKind::kResourceExhausted, "buffer.alloc length " + std::to_string(length) + " out of range");
  }
  return std::make_shared<Buffer>(static_cast<size_t>(length));
}
void buffer_copy(const VmRef& src, int64_t src_off, const VmRef& dst, int64_t dst_off, int64_t len) {
  const uint8_t* from = as_buffer(src).range(src_off, len);
  uint8_t* to = as_buffer(dst).writable_range(dst_off, len);
  if (len > 0) std::memmove(to, from, static_cast<size_t>(len));
}
VmRef list_alloc(int32_t capacity) {
  auto list = std::make_shared<List>();
  list->reserve(capacity);
  return list;
}

// --- register banks of one frame.
struct Banks {
  int32_t* i32;
  int64_t* i64;
  float* f32;
  double* f64;
  VmRef* ref;
};

Banks banks_of(Stack& s) {
  const Frame& f = s.top();
  return Banks{s.i32.data() + f.i32_base, s.i64.data() + f.i64_base, s.f32.data() + f.f32_base,
               s.f64.data() + f.f64_base, s.refs.data() + f.ref_base};
}

Value read_value(const Banks& b, ValueType type, uint16_t reg) {
  switch (type) {
    case ValueType::kI32: return Value::from_i32(b.i32[reg]);
    case ValueType::kI64: return Value::from_i64(b.i64[reg]);
    case ValueType::kF32: return Value::from_f32(b.f32[reg]);
    case ValueType::kF64: return Value::from_f64(b.f64[reg]);
    case ValueType::kRef: return Value::from_ref(b.ref[reg]);
  }
  return Value();
}

void write_value(const Banks& b, ValueType type, uint16_t reg, Value& v) {
  if (v.type != type) {
    throw Error(ErrorKind::kTypeMismatch,
                std::string("callee returned ") + value_type_name(v.type) + " where " + value_type_name(type) +
                " was expected");
  }
  switch (type) {
    case ValueType::kI32: b.i32[reg] = v.i32; break;
    case ValueType::kI64: b.i64[reg] = v.i64; break;
    case ValueType::kF32: b.f32[reg] = v.f32; break;
    case ValueType::kF64: b.f64[reg] = v.f64; break;
    case ValueType::kRef: b.ref[reg] = std::move(v.ref); break;
  }
}

// Copies one register between two frames of the same stack (pool indices,
// because pointers would not survive pool growth).
void copy_register(Stack& s, ValueType type, const Frame& from, uint16_t src, const Frame& to, uint16_t dst) {
  switch (type) {
    case ValueType::kI32: s.i32[to.i32_base + dst] = s.i32[from.i32_base + src]; break;
    case ValueType::kI64: s.i64[to.i64_base + dst] = s.i64[from.i64_base + src]; break;
    case ValueType::kF32: s.f32[to.f32_base + dst] = s.f32[from.f32_base + src]; break;
    case ValueType::kF64: s.f64[to.f64_base + dst] = s.f64[from.f64_base + src]; break;
    case ValueType::kRef: s.refs[to.ref_base + dst] = s.refs[from.ref_base + src]; break;
  }
}

void push_bytecode_frame(Stack& s, const BytecodeModule& module, uint32_t function) {
  const FunctionDef& fn = module.def().functions[function];
  s.push(FrameType::kBytecode, &module, function);
  const Frame& f = s.top();
  s.i32.resize(f.i32_base + fn.registers[0]);
  s.i64.resize(f.i64_base + fn.registers[1]);
  s.f32.resize(f.f32_base + fn.registers[2]);
  s.f64.resize(f.f64_base + fn.registers[3]);
  s.refs.resize(f.ref_base + fn.registers[4]);
}

// Internal call: new frame, arguments copied positionally into the callee's
// argument slots.
void enter_internal(Stack& s, const BytecodeModule& module, uint32_t callee, const uint8_t* arg_regs) {
  push_bytecode_frame(s, module, callee);
  const FunctionInfo& info = module.function_info(callee);
  const Frame& caller = s.frames()[s.depth() - 2];
  const Frame& frame = s.top();
  for (size_t k = 0; k < info.arg_types.size(); ++k) {
    copy_register(s, info.arg_types[k], caller, rd<uint16_t>(arg_regs + 2 * k), frame, info.arg_slots[k]);
  }
}

void write_results(Stack& s, const uint8_t* result_regs, uint16_t count, const std::vector<ValueType>& types,
                   std::vector<Value>& out) {
  if (out.size() != count) throw Error(ErrorKind::kTypeMismatch, "callee returned the wrong number of results");
  const Banks b = banks_of(s);
  for (uint16_t k = 0; k < count; ++k) write_value(b, types[k], rd<uint16_t>(result_regs + 2 * k), out[k]);
}

void call_import(Stack& s, const BytecodeModule& module, ModuleState& state, uint32_t index,
                 const uint8_t* arg_regs, const uint8_t* result_regs, uint16_t result_count) {
  const Signature& sig = module.import_signature(index);
  const Banks b = banks_of(s);
  std::vector<Value> args;
  args.reserve(sig.args.size());
  for (size_t k = 0; k < sig.args.size(); ++k) args.push_back(read_value(b, sig.args[k].type, rd<uint16_t>(arg_regs + 2 * k)));
  std::vector<Value> results;
  invoke_function(s, state.imports[index], args, &results);
  write_results(s, result_regs, result_count, sig.result_types(), results);
}

// Variadic spans are marshalled as an i32 count followed by the tuples.
void call_import_variadic(Stack& s, const BytecodeModule& module, ModuleState& state, uint32_t index,
                          const uint8_t* segments, const uint8_t* arg_regs, const uint8_t* result_regs,
                          uint16_t result_count) {
  const Signature& sig = module.import_signature(index);
  const Banks b = banks_of(s);
  std::vector<Value> args;
  size_t next = 0;
  for (size_t k = 0; k < sig.args.size(); ++k) {
    const SignatureItem& item = sig.args[k];
    const uint16_t seg = rd<uint16_t>(segments + 2 * k);
    if (!item.variadic) {
      args.push_back(read_value(b, item.type, rd<uint16_t>(arg_regs + 2 * next++)));
      continue;
    }
    args.push_back(Value::from_i32(seg));
    for (uint16_t t = 0; t < seg; ++t) {
      for (ValueType type : item.tuple) args.push_back(read_value(b, type, rd<uint16_t>(arg_regs + 2 * next++)));
    }
  }
  std::vector<Value> results;
  invoke_function(s, state.imports[index], args, &results);
  write_results(s, result_regs, result_count, sig.result_types(), results);
}

void enter_entry(Stack& s, const BytecodeModule& module, uint32_t function, const std::vector<Value>& args) {
  push_bytecode_frame(s, module, function);
  const FunctionInfo& info = module.function_info(function);
  if (args.size() != info.arg_types.size()) throw Error(ErrorKind::kTypeMismatch, "wrong number of arguments");
  const Banks b = banks_of(s);
  for (size_t k = 0; k < args.size(); ++k) {
    Value v = args[k];
    write_value(b, info.arg_types[k], info.arg_slots[k], v);
  }
}

// Pops every frame above `depth` on the way out of interpret(), including
// when a trap unwinds.
struct UnwindGuard {
  Stack& stack;
  size_t depth;
  ~UnwindGuard() {
    while (stack.depth() > depth) stack.pop();
  }
};

void annotate(Error& e, const BytecodeModule& module, uint32_t fn, uint32_t pc) {
  // The innermost bytecode frame names the fault; outer frames keep it.
  if (!e.context_value("function").empty()) return;
  e.with("module", module.name()).with("function", module.def().functions[fn].name).with("offset", std::to_string(pc));
}

// kTrace instantiates a second loop that reports every instruction to the
// stack's tracer before running it; the untraced loop pays nothing for it.
template <bool kTrace>
void run(Stack& stack, const BytecodeModule& module, ModuleState& state, size_t entry_depth, uint32_t fn,
         std::vector<Value>* results) {
  uint32_t pc = 0;
  try {
    const uint8_t* code = module.def().functions[fn].code.data();
    Banks b = banks_of(stack);
    // Internal calls stay in this module, so the globals never change under the loop.
    Value* const globals = static_cast<BytecodeState&>(state).globals.data();

#define U16(off) rd<uint16_t>(code + pc + (off))
#define I32(off) b.i32[U16(off)]
#define I64(off) b.i64[U16(off)]
#define F32(off) b.f32[U16(off)]
#define F64(off) b.f64[U16(off)]
#define REF(off) b.ref[U16(off)]
#define GLOBAL(off) globals[rd<uint32_t>(code + pc + (off))]
#define JUMP(target) pc = (target) + 1 /* skip the block marker */

#if GRAPHRT_VM_COMPUTED_GOTO
#define GRAPHRT_VM_LABEL(id, mnemonic, operands, flags) &&L_##id,
    static void* const kTable[] = {GRAPHRT_VM_OPCODES(GRAPHRT_VM_LABEL)};
#undef GRAPHRT_VM_LABEL
#define CASE(id) L_##id:
#define DISPATCH()                                           \
  do {                                                       \
    if (kTrace) (*stack.tracer())(module, fn, pc);           \
    goto* kTable[code[pc]];                                  \
  } while (0)
    DISPATCH();
    {
#else
#define CASE(id) case Op::id:
#define DISPATCH() goto dispatch
  dispatch:
    if (kTrace) (*stack.tracer())(module, fn, pc);
    switch (static_cast<Op>(code[pc])) {
#endif
// Operand k of a register-only op sits at byte 1 + 2k.
#define OP2(id, D, S, EXPR) \
  CASE(id) {                \
    const auto x = S(3);    \
    D(1) = (EXPR);          \
    pc += 5;                \
    DISPATCH();             \
  }
#define OP3(id, D, S, EXPR)  \
  CASE(id) {                 \
    const auto x = S(3);     \
    const auto y = S(5);     \
    D(1) = (EXPR);           \
    pc += 7;                 \
    DISPATCH();              \
  }
#define SELECT(id, BANK)                      \
  CASE(id) {                                  \
    BANK(1) = I32(3) ? BANK(5) : BANK(7);     \
    pc += 9;                                  \
    DISPATCH();                               \
  }

      // ---- control
      CASE(Block) { pc += 1; DISPATCH(); }
      CASE(Nop) { pc += 1; DISPATCH(); }
      CASE(Br) {
        stack.consume_budget();
        JUMP(rd<uint32_t>(code + pc + 1));
        DISPATCH();
      }
      CASE(BrIf) {
        stack.consume_budget();
        JUMP(I32(1) ? rd<uint32_t>(code + pc + 3) : rd<uint32_t>(code + pc + 7));
        DISPATCH();
      }
      CASE(BrTable) {
        stack.consume_budget();
        const int32_t index = I32(1);
        const uint16_t count = U16(7);
        const bool in_range = index >= 0 && index < count;
        JUMP(in_range ? rd<uint32_t>(code + pc + 9 + 4 * index) : rd<uint32_t>(code + pc + 3));
        DISPATCH();
      }
      CASE(Call) {
        stack.consume_budget();
        const uint32_t callee = rd<uint32_t>(code + pc + 1);
        const uint8_t* args = code + pc + 5;
        const uint8_t* res = args + 2 + 2 * rd<uint16_t>(args);
        const uint16_t nres = rd<uint16_t>(res);
        const uint32_t next = static_cast<uint32_t>(res + 2 + 2 * nres - code);
        stack.top().pc = pc;
        if (callee & kImportBit) {
          call_import(stack, module, state, callee & ~kImportBit, args + 2, res + 2, nres);
          b = banks_of(stack);
          pc = next;
          DISPATCH();
        }
        stack.top().pc = next;
        stack.top().result_list_pc = static_cast<uint32_t>(res - code);
        enter_internal(stack, module, callee, args + 2);
        fn = callee;
        code = module.def().functions[fn].code.data();
        b = banks_of(stack);
        pc = 0;
        DISPATCH();
      }
      CASE(CallVariadic) {
        stack.consume_budget();
        const uint32_t callee = rd<uint32_t>(code + pc + 1);
        const uint8_t* segs = code + pc + 5;
        const uint8_t* args = segs + 2 + 2 * rd<uint16_t>(segs);
        const uint8_t* res = args + 2 + 2 * rd<uint16_t>(args);
        const uint16_t nres = rd<uint16_t>(res);
        stack.top().pc = pc;
        call_import_variadic(stack, module, state, callee & ~kImportBit, segs + 2, args + 2, res + 2, nres);
        b = banks_of(stack);
        pc = static_cast<uint32_t>(res + 2 + 2 * nres - code);
        DISPATCH();
      }
      CASE(Ret) {
        const FunctionInfo& info = module.function_info(fn);
        const uint8_t* regs = code + pc + 3;
        if (stack.depth() == entry_depth + 1) {
          for (size_t k = 0; k < info.result_types.size(); ++k) {
            results->push_back(read_value(b, info.result_types[k], rd<uint16_t>(regs + 2 * k)));
          }
          stack.pop();
          return;
        }
        const Frame& callee_frame = stack.top();
        const Frame& caller = stack.frames()[stack.depth() - 2];
        const uint8_t* caller_code = module.def().functions[caller.function].code.data();
        const uint8_t* dst = caller_code + caller.result_list_pc + 2;
        for (size_t k = 0; k < info.result_types.size(); ++k) {
          copy_register(stack, info.result_types[k], callee_frame, rd<uint16_t>(regs + 2 * k), caller,
                        rd<uint16_t>(dst + 2 * k));
        }
        stack.pop();
        fn = stack.top().function;
        pc = stack.top().pc;
        code = caller_code;
        b = banks_of(stack);
        DISPATCH();
      }
      CASE(Fail) {
        const int32_t status = I32(1);
        const VmRef& message = module.rodata(rd<uint32_t>(code + pc + 3));
        throw Error(static_cast<Buffer*>(message.get())->as_string()).with("status", std::to_string(status));
      }

      // ---- constants
      CASE(ConstI32) { I32(1) = rd<int32_t>(code + pc + 3); pc += 7; DISPATCH(); }
      CASE(ConstI64) { I64(1) = rd<int64_t>(code + pc + 3); pc += 11; DISPATCH(); }
      CASE(ConstF32) { F32(1) = rd<float>(code + pc + 3); pc += 7; DISPATCH(); }
      CASE(ConstF64) { F64(1) = rd<double>(code + pc + 3); pc += 11; DISPATCH(); }
      CASE(ConstRefNull) { REF(1).reset(); pc += 3; DISPATCH(); }
      CASE(ConstRefRodata) { REF(1) = module.rodata(rd<uint32_t>(code + pc + 3)); pc += 7; DISPATCH(); }

      // ---- moves / selects
      OP2(MovI32, I32, I32, x)
      OP2(MovI64, I64, I64, x)
      OP2(MovF32, F32, F32, x)
      OP2(MovF64, F64, F64, x)
      CASE(MovRef) { REF(1) = REF(3); pc += 5; DISPATCH(); }
      SELECT(SelectI32, I32)
      SELECT(SelectI64, I64)
      SELECT(SelectF32, F32)
      SELECT(SelectF64, F64)
      SELECT(SelectRef, REF)

      // ---- i32 / i64 arithmetic
#define INT_OPS(T, R, S)                                   \
  OP3(Add##S, R, R, wadd<T>(x, y))                         \
  OP3(Sub##S, R, R, wsub<T>(x, y))                         \
  OP3(Mul##S, R, R, wmul<T>(x, y))                         \
  OP3(DivS##S, R, R, sdiv<T>(x, y))                        \
  OP3(DivU##S, R, R, udiv<T>(x, y))                        \
  OP3(RemS##S, R, R, srem<T>(x, y))                        \
  OP3(RemU##S, R, R, urem<T>(x, y))                        \
  OP3(And##S, R, R, static_cast<T>(x & y))                 \
  OP3(Or##S, R, R, static_cast<T>(x | y))                  \
  OP3(Xor##S, R, R, static_cast<T>(x ^ y))                 \
  OP3(Shl##S, R, R, wshl<T>(x, y))                         \
  OP3(ShrS##S, R, R, wshrs<T>(x, y))                       \
  OP3(ShrU##S, R, R, wshru<T>(x, y))                       \
  OP3(MinS##S, R, R, x < y ? x : y)                        \
  OP3(MaxS##S, R, R, x < y ? y : x)                        \
  OP2(Not##S, R, R, static_cast<T>(~x))                    \
  OP2(Neg##S, R, R, wneg<T>(x))                            \
  OP2(Abs##S, R, R, wabs<T>(x))                            \
  OP3(CmpEq##S, I32, R, static_cast<int32_t>(x == y))      \
  OP3(CmpNe##S, I32, R, static_cast<int32_t>(x != y))      \
  OP3(CmpLtS##S, I32, R, static_cast<int32_t>(x < y))      \
  OP3(CmpLeS##S, I32, R, static_cast<int32_t>(x <= y))     \
  OP3(CmpLtU##S, I32, R, ult<T>(x, y))                     \
  OP3(CmpLeU##S, I32, R, ule<T>(x, y))                     \
  OP2(CmpNz##S, I32, R, static_cast<int32_t>(x != 0))
      INT_OPS(int32_t, I32, I32)
      INT_OPS(int64_t, I64, I64)

      // ---- f32 / f64 arithmetic
#define FLOAT_OPS(T, R, S)                                         \
  OP3(Add##S, R, R, x + y)                                         \
  OP3(Sub##S, R, R, x - y)                                         \
  OP3(Mul##S, R, R, x * y)                                         \
  OP3(Div##S, R, R, x / y)                                         \
  OP3(Rem##S, R, R, std::fmod(x, y))                               \
  OP3(Min##S, R, R, std::fmin(x, y))                               \
  OP3(Max##S, R, R, std::fmax(x, y))                               \
  OP2(Neg##S, R, R, -x)                                            \
  OP2(Abs##S, R, R, std::fabs(x))                                  \
  OP2(Sqrt##S, R, R, std::sqrt(x))                                 \
  OP2(Floor##S, R, R, std::floor(x))                               \
  OP2(Ceil##S, R, R, std::ceil(x))                                 \
  OP3(CmpEq##S, I32, R, static_cast<int32_t>(x == y))              \
  OP3(CmpNe##S, I32, R, static_cast<int32_t>(x != y))              \
  OP3(CmpLt##S, I32, R, static_cast<int32_t>(x < y))               \
  OP3(CmpLe##S, I32, R, static_cast<int32_t>(x <= y))              \
  OP2(CmpNan##S, I32, R, static_cast<int32_t>(std::isnan(x)))
      FLOAT_OPS(float, F32, F32)
      FLOAT_OPS(double, F64, F64)

      CASE(CmpEqRef) { I32(1) = REF(3) == REF(5); pc += 7; DISPATCH(); }
      CASE(CmpNzRef) { I32(1) = REF(3) != nullptr; pc += 5; DISPATCH(); }

      // ---- conversions
      OP2(ExtI32I64S, I64, I32, static_cast<int64_t>(x))
      OP2(ExtI32I64U, I64, I32, static_cast<int64_t>(static_cast<uint32_t>(x)))
      OP2(TruncI64I32, I32, I64, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x))))
      OP2(TruncI32I8, I32, I32, static_cast<int32_t>(static_cast<uint32_t>(x) & 0xFFu))
      OP2(TruncI32I16, I32, I32, static_cast<int32_t>(static_cast<uint32_t>(x) & 0xFFFFu))
      OP2(ExtI8I32S, I32, I32, static_cast<int32_t>(static_cast<int8_t>(static_cast<uint8_t>(x))))
      OP2(ExtI16I32S, I32, I32, static_cast<int32_t>(static_cast<int16_t>(static_cast<uint16_t>(x))))
      OP2(CvtSI32F32, F32, I32, static_cast<float>(x))
      OP2(CvtUI32F32, F32, I32, static_cast<float>(static_cast<uint32_t>(x)))
      OP2(CvtF32SI32, I32, F32, sat<int32_t>(x))
      OP2(CvtSI32F64, F64, I32, static_cast<double>(x))
      OP2(CvtF64SI32, I32, F64, sat<int32_t>(x))
      OP2(CvtSI64F32, F32, I64, static_cast<float>(x))
      OP2(CvtF32SI64, I64, F32, sat<int64_t>(x))
      OP2(CvtSI64F64, F64, I64, static_cast<double>(x))
      OP2(CvtF64SI64, I64, F64, sat<int64_t>(x))
      OP2(ExtF32F64, F64, F32, static_cast<double>(x))
      OP2(TruncF64F32, F32, F64, static_cast<float>(x))
      OP2(BitcastI32F32, F32, I32, bitcast<float>(x))
      OP2(BitcastF32I32, I32, F32, bitcast<int32_t>(x))
      OP2(BitcastI64F64, F64, I64, bitcast<double>(x))
      OP2(BitcastF64I64, I64, F64, bitcast<int64_t>(x))

      // ---- lists
      CASE(ListAlloc) { REF(1) = list_alloc(I32(3)); pc += 5; DISPATCH(); }
      CASE(ListSize) { I32(1) = static_cast<int32_t>(as_list(REF(3)).size()); pc += 5; DISPATCH(); }
      CASE(ListResize) { as_list(REF(1)).resize(I32(3)); pc += 5; DISPATCH(); }
#define LIST_GET(id, BANK, TYPE, FIELD)                                     \
  CASE(id) {                                                                \
    BANK(1) = as_list(REF(3)).get(I32(5), ValueType::TYPE).FIELD;           \
    pc += 7;                                                                \
    DISPATCH();                                                             \
  }
#define LIST_SET(id, BANK, MAKE)                                            \
  CASE(id) {                                                                \
    as_list(REF(1)).set(I32(3), Value::MAKE(BANK(5)));                      \
    pc += 7;                                                                \
    DISPATCH();                                                             \
  }
      LIST_GET(ListGetI32, I32, kI32, i32)
      LIST_GET(ListGetI64, I64, kI64, i64)
      LIST_GET(ListGetF32, F32, kF32, f32)
      LIST_GET(ListGetF64, F64, kF64, f64)
      LIST_GET(ListGetRef, REF, kRef, ref)
      LIST_SET(ListSetI32, I32, from_i32)
      LIST_SET(ListSetI64, I64, from_i64)
      LIST_SET(ListSetF32, F32, from_f32)
      LIST_SET(ListSetF64, F64, from_f64)
      LIST_SET(ListSetRef, REF, from_ref)

      // ---- buffers
      CASE(BufferAlloc) {
        stack.consume_bytes(I64(3));
        REF(1) = buffer_alloc(I64(3));
        pc += 5;
        DISPATCH();
      }
      CASE(BufferLength) { I64(1) = static_cast<int64_t>(as_buffer(REF(3)).bytes().size()); pc += 5; DISPATCH(); }
      CASE(BufferClone) {
        const Buffer& from = as_buffer(REF(3));
        stack.consume_bytes(static_cast<int64_t>(from.bytes().size()));
        REF(1) = Buffer::clone_of(from);
        pc += 5;
        DISPATCH();
      }
      CASE(BufferLoadU8) { I32(1) = buffer_load<uint8_t>(REF(3), I64(5)); pc += 7; DISPATCH(); }
      CASE(BufferLoadI32) { I32(1) = buffer_load<int32_t>(REF(3), I64(5)); pc += 7; DISPATCH(); }
      CASE(BufferLoadI64) { I64(1) = buffer_load<int64_t>(REF(3), I64(5)); pc += 7; DISPATCH(); }
      CASE(BufferLoadF32) { F32(1) = buffer_load<float>(REF(3), I64(5)); pc += 7; DISPATCH(); }
      CASE(BufferLoadF64) { F64(1) = buffer_load<double>(REF(3), I64(5)); pc += 7; DISPATCH(); }
      CASE(BufferStoreI8) { buffer_store<uint8_t>(REF(1), I64(3), static_cast<uint8_t>(I32(5))); pc += 7; DISPATCH(); }
      CASE(BufferStoreI32) { buffer_store<int32_t>(REF(1), I64(3), I32(5)); pc += 7; DISPATCH(); }
      CASE(BufferStoreI64) { buffer_store<int64_t>(REF(1), I64(3), I64(5)); pc += 7; DISPATCH(); }
      CASE(BufferStoreF32) { buffer_store<float>(REF(1), I64(3), F32(5)); pc += 7; DISPATCH(); }
      CASE(BufferStoreF64) { buffer_store<double>(REF(1), I64(3), F64(5)); pc += 7; DISPATCH(); }
      CASE(BufferFillI8) {
        const int64_t len = I64(5);
        uint8_t* p = as_buffer(REF(1)).writable_range(I64(3), len);
        stack.consume_bytes(len);
        if (len > 0) std::memset(p, static_cast<uint8_t>(I32(7)), static_cast<size_t>(len));
        pc += 9;
        DISPATCH();
      }
      CASE(BufferCopy) {
        stack.consume_bytes(I64(9));
        buffer_copy(REF(1), I64(3), REF(5), I64(7), I64(9));
        pc += 11;
        DISPATCH();
      }
      // ---- globals (the verifier checked ordinal and type)
      CASE(GlobalLoadI32) { I32(1) = GLOBAL(3).i32; pc += 7; DISPATCH(); }
      CASE(GlobalLoadI64) { I64(1) = GLOBAL(3).i64; pc += 7; DISPATCH(); }
      CASE(GlobalLoadF32) { F32(1) = GLOBAL(3).f32; pc += 7; DISPATCH(); }
      CASE(GlobalLoadF64) { F64(1) = GLOBAL(3).f64; pc += 7; DISPATCH(); }
      CASE(GlobalLoadRef) { REF(1) = GLOBAL(3).ref; pc += 7; DISPATCH(); }
      CASE(GlobalStoreI32) { GLOBAL(1).i32 = I32(5); pc += 7; DISPATCH(); }
      CASE(GlobalStoreI64) { GLOBAL(1).i64 = I64(5); pc += 7; DISPATCH(); }
      CASE(GlobalStoreF32) { GLOBAL(1).f32 = F32(5); pc += 7; DISPATCH(); }
      CASE(GlobalStoreF64) { GLOBAL(1).f64 = F64(5); pc += 7; DISPATCH(); }
      CASE(GlobalStoreRef) { GLOBAL(1).ref = REF(5); pc += 7; DISPATCH(); }
#if !GRAPHRT_VM_COMPUTED_GOTO
      default:
        throw Error("invalid opcode (unverified bytecode?)");
#endif
    }
  } catch (Error& e) {
    annotate(e, module, fn, pc);
    throw;
  } catch (const std::bad_alloc&) {
    Error wrapped(ErrorKind::kResourceExhausted, "out of memory");
    annotate(wrapped, module, fn, pc);
    throw wrapped;
  } catch (const std::exception& e) {
    Error wrapped(ErrorKind::kInternal, e.what());
    annotate(wrapped, module, fn, pc);
    throw wrapped;
  }
}

}  // namespace

void interpret(Stack& stack, const BytecodeModule& module, ModuleState& state, uint32_t function,
               const std::vector<Value>& args, std::vector<Value>* results) {
  const size_t entry_depth = stack.depth();
  UnwindGuard guard{stack, entry_depth};
  enter_entry(stack, module, function, args);
  if (stack.tracer()) {
    run<true>(stack, module, state, entry_depth, function, results);
  } else {
    run<false>(stack, module, state, entry_depth, function, results);
  }
}

}  // namespace vm
}  // namespace graphrt
