// Executables that pass the verifier but hand the builtins and the
// interpreter hostile values at run time (what fuzz/relax_run_fuzz.cc
// feeds them): each must end in a graphrt::Error naming the builtin or the
// limit, never in a crash, a huge allocation or a run without end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/relax/interpreter.h"
#include "backends/relax/storage_cache.h"
#include "backends/relax/storage_pool.h"
#include "relax_builder.h"

namespace {

using namespace graphrt::relax;
using namespace graphrt_test;

// Runs `main` and returns its error; fails the test when there is none.
graphrt::Error error_of(graphrt::Module vm, std::vector<Value> args) {
  try {
    run(vm, std::move(args));
  } catch (const graphrt::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return graphrt::Error("no error");
}

// Calls function `fn` of an interpreter made with its own pool or budget with
// one int argument and returns its error; fails the test when there is none.
graphrt::Error error_of(VirtualMachine& vm, int64_t fn) {
  const Value x = int64_t{1};
  const Value* argv[] = {&x};
  try {
    vm.call(fn, argv, 1);
  } catch (const graphrt::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return graphrt::Error("no error");
}

void expect_mentions(const graphrt::Error& e, const std::string& text) {
  EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
}

// r1 = builder(r1) in a loop: each value holds the one before. Destroying or
// walking such a chain recurses once per level, so its depth is capped.
TEST(RelaxHostileRun, TupleNestingIsCapped) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t make_tuple = b.function("vm.builtin.make_tuple");
  b.begin(main, {"x"}, 2);
  b.call(1, make_tuple, {reg(1)});  // 0
  b.goto_(-1);                      // 1
  b.ret(1);                         // 2
  const graphrt::Error e = error_of(b.vm(), {int64_t{0}});
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
  expect_mentions(e, "vm.builtin.make_tuple");
  expect_mentions(e, "nest");
  EXPECT_EQ(e.context_value("builtin"), "vm.builtin.make_tuple");
}

TEST(RelaxHostileRun, ClosureNestingIsCapped) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t make_closure = b.function("vm.builtin.make_closure");
  const int64_t invoke_closure = b.function("vm.builtin.invoke_closure");
  b.begin(main, {"x"}, 2);
  b.call(1, make_closure, {fn(invoke_closure), kVm, reg(1)});  // 0: invoking it invokes the one before
  b.goto_(-1);                                                  // 1
  b.ret(1);                                                     // 2
  const graphrt::Error e = error_of(b.vm(), {int64_t{0}});
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
  expect_mentions(e, "vm.builtin.make_closure");
  EXPECT_EQ(e.context_value("builtin"), "vm.builtin.make_closure");
}

// A chain of closures short enough to build, invoked: each level is a native
// call through invoke_closure (no VM frame), so those calls are counted too.
TEST(RelaxHostileRun, ClosureChainInvocationIsCapped) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t make_closure = b.function("vm.builtin.make_closure");
  const int64_t invoke_closure = b.function("vm.builtin.invoke_closure");
  const int64_t null_value = b.function("vm.builtin.null_value");
  b.begin(main, {"x"}, 3);
  b.call(1, make_closure, {fn(null_value)});
  for (int i = 0; i < 600; ++i) b.call(1, make_closure, {fn(invoke_closure), kVm, reg(1)});
  b.call(2, invoke_closure, {kVm, reg(1)});
  b.ret(2);
  const graphrt::Error e = error_of(b.vm(), {int64_t{0}});
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
  expect_mentions(e, "nest deeper than " + std::to_string(kMaxCallDepth));
}

// A function with the largest register file the verifier allows, calling
// itself: the live registers of the call stack are capped, not only its depth.
TEST(RelaxHostileRun, LiveRegistersAreCapped) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  b.begin(main, {"x"}, kMaxRegisterFileSize);
  b.call(1, main, {reg(0)});
  b.ret(1);
  const graphrt::Error e = error_of(b.vm(), {int64_t{0}});
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
  expect_mentions(e, "registers");
}

// Calls of a function with a huge register file count against the instruction
// budget by its size: clearing it is work the instruction count would miss.
TEST(RelaxHostileRun, RegisterFilesCountAgainstTheBudget) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t wide = b.function("wide", FunctionKind::kVMFunc);
  b.begin(main, {"x"}, 2);
  for (int i = 0; i < 50; ++i) b.call(1, wide, {reg(0)});
  b.ret(1);
  b.begin(wide, {"x"}, kMaxRegisterFileSize);
  b.ret(0);
  VirtualMachine vm(b.linked(), StoragePool::create(true));
  vm.set_instruction_budget(300000);
  const graphrt::Error e = error_of(vm, main);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
  expect_mentions(e, "instruction budget");
}

TEST(RelaxHostileRun, AllocTensorRefusesADtypeWithoutLanes) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t alloc_storage = b.function("vm.builtin.alloc_storage");
  const int64_t alloc_tensor = b.function("vm.builtin.alloc_tensor");
  b.begin(main, {"x"}, 3);
  b.call(1, alloc_storage, {kVm, b.constant(make_shape({64})), imm(0), b.constant(DLDataType{kDLUInt, 8, 1})});
  // float32x0: zero bytes per element, so any shape would "fit" in the storage.
  b.call(2, alloc_tensor, {reg(1), imm(0), b.constant(make_shape({int64_t{1} << 40})), b.constant(DLDataType{kDLFloat, 32, 0})});
  b.ret(2);
  const graphrt::Error e = error_of(b.vm(), {int64_t{0}});
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kUnsupported);
  expect_mentions(e, "vm.builtin.alloc_tensor");
  EXPECT_EQ(e.context_value("argument"), "3");
}

TEST(RelaxHostileRun, AllocStorageRefusesNegativeAndHugeSizes) {
  for (int64_t size : {int64_t{-8}, kMaxStorageBytes + 1}) {
    SCOPED_TRACE(size);
    Builder b;
    const int64_t main = b.function("main", FunctionKind::kVMFunc);
    const int64_t alloc_storage = b.function("vm.builtin.alloc_storage");
    b.begin(main, {"x"}, 2);
    b.call(1, alloc_storage, {kVm, b.constant(make_shape({size})), imm(0), b.constant(DLDataType{kDLUInt, 8, 1})});
    b.ret(1);
    const graphrt::Error e = error_of(b.vm(), {int64_t{0}});
    expect_mentions(e, "vm.builtin.alloc_storage");
    EXPECT_EQ(e.context_value("builtin"), "vm.builtin.alloc_storage");
  }
}

// The pool holds at most its limit: a request beyond it first lets the free
// list go, then is refused.
TEST(RelaxHostileRun, StoragePoolHoldsAtMostItsLimit) {
  auto pool = StoragePool::create(true, 1024);
  {
    graphrt::NDArray a = pool->allocate(600);
    try {
      pool->allocate(600);
      FAIL() << "no error";
    } catch (const graphrt::Error& e) {
      EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
      expect_mentions(e, "1024");
    }
  }
  EXPECT_EQ(pool->free_blocks(), 1u);
  graphrt::NDArray b = pool->allocate(900);  // only once the free 600 are given back
  EXPECT_EQ(pool->free_blocks(), 0u);
  EXPECT_EQ(b.nbytes(), 900u);
}

// The VM keeps idle storages for the next call of the same size; at the
// pool's limit it lets them go before refusing a storage of another size.
TEST(RelaxHostileRun, StorageCacheLetsIdleStoragesGoAtThePoolLimit) {
  StorageCache cache(StoragePool::create(true, 1024));
  cache.storage(600);  // kept, and idle once this reference goes
  const graphrt::Ref<StorageObj> busy = cache.storage(300);
  EXPECT_EQ(cache.storage(700)->bytes.nbytes(), 700u);
  try {
    cache.storage(800);  // even with the idle 700 let go, 300 busy leave no room for 800
    FAIL() << "no error";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
  }
}

// Builtins that make tensors of a size the code chooses (the shape heap here)
// take them from the VM's pool, under its limit.
TEST(RelaxHostileRun, BuiltinOutputsComeFromTheLimitedPool) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t heap = b.function("vm.builtin.alloc_shape_heap");
  b.begin(main, {"x"}, 2);
  b.call(1, heap, {kVm, imm(int64_t{1} << 20)});  // 8 MiB
  b.ret(1);
  VirtualMachine vm(b.linked(), StoragePool::create(true, int64_t{4} << 20));
  const graphrt::Error e = error_of(vm, main);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
  expect_mentions(e, "vm.builtin.alloc_shape_heap");
}

// A loop of instructions that each do work in proportion to their data (an
// 4 MiB shape heap filled) is stopped by the budget as soon as a loop of cheap
// ones would be, not after as many iterations.
TEST(RelaxHostileRun, BuiltinWorkCountsAgainstTheBudget) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t heap = b.function("vm.builtin.alloc_shape_heap");
  b.begin(main, {"x"}, 2);
  b.call(1, heap, {kVm, imm(int64_t{1} << 19)});  // 0
  b.goto_(-1);                                    // 1
  b.ret(1);                                       // 2
  VirtualMachine vm(b.linked(), StoragePool::create(true));
  vm.set_instruction_budget(1000000);  // 15 heaps of 2^19 slots, not 500,000
  const graphrt::Error e = error_of(vm, main);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
  expect_mentions(e, "instruction budget of 1000000 exhausted (by vm.builtin.alloc_shape_heap)");
}

// assert_op's message of a tuple sharing its items 2^60 times over stops at a few KiB.
TEST(RelaxHostileRun, AssertMessageOfASharedTupleIsBounded) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t make_tuple = b.function("vm.builtin.make_tuple");
  const int64_t assert_op = b.function("relax.run.assert_op");
  b.begin(main, {"x"}, 2);
  b.call(1, make_tuple, {reg(0)});
  for (int i = 0; i < 60; ++i) b.call(1, make_tuple, {reg(1), reg(1)});
  b.call(kVoidRegister, assert_op, {imm(0), b.constant(std::make_shared<const std::string>("")), reg(1)});
  b.ret(1);
  const graphrt::Error e = error_of(b.vm(), {int64_t{7}});
  expect_mentions(e, "relax.run.assert_op: Assertion Failed: ((((");
  expect_mentions(e, "...");
  EXPECT_LT(std::string(e.what()).size(), 5000u);
}

// Wrong kinds and out-of-range values handed to the builtins: each error is
// one line that names the builtin (and the argument, where one is at fault).
struct BadCall {
  const char* name;
  const char* builtin;   // the builtin the error names
  const char* message;   // a part of its message
  graphrt::ErrorKind kind;
  const char* argument;  // the "argument" context, or "" when none is expected
  // Emits main's body, its parameter a float32[2] tensor in register 0.
  void (*emit)(Builder& b);
};

int64_t dtype(Builder& b, DLDataType t) { return b.constant(t); }
int64_t shape(Builder& b, std::vector<int64_t> dims) { return b.constant(make_shape(std::move(dims))); }
constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kU8{kDLUInt, 8, 1};
const int64_t kNone = reg(kVoidRegister);

const BadCall kBadCalls[] = {
    {"tuple index past the end", "vm.builtin.tuple_getitem", "index 5 outside a tuple of 1", graphrt::ErrorKind::kOutOfRange, "",
     [](Builder& b) {
       b.call(1, b.function("vm.builtin.make_tuple"), {reg(0)});
       b.call(2, b.function("vm.builtin.tuple_getitem"), {reg(1), imm(5)});
     }},
    {"tuple_getitem on a tensor", "vm.builtin.tuple_getitem", "must be a tuple, not NDArray", graphrt::ErrorKind::kTypeMismatch, "0",
     [](Builder& b) { b.call(2, b.function("vm.builtin.tuple_getitem"), {reg(0), imm(0)}); }},
    {"invoke_closure on an int", "vm.builtin.invoke_closure", "must be a closure or function, not int",
     graphrt::ErrorKind::kTypeMismatch, "1", [](Builder& b) { b.call(2, b.function("vm.builtin.invoke_closure"), {kVm, imm(3)}); }},
    {"make_closure of a tensor", "vm.builtin.make_closure", "must be a function, not NDArray", graphrt::ErrorKind::kTypeMismatch, "0",
     [](Builder& b) { b.call(2, b.function("vm.builtin.make_closure"), {reg(0)}); }},
    {"call_tir_dyn of a shape", "vm.builtin.call_tir_dyn", "must be a closure or function, not Shape",
     graphrt::ErrorKind::kTypeMismatch, "0",
     [](Builder& b) { b.call(2, b.function("vm.builtin.call_tir_dyn"), {shape(b, {1}), reg(0), shape(b, {1})}); }},
    {"call_tir_dyn without a shape last", "vm.builtin.call_tir_dyn", "must be a shape, not int", graphrt::ErrorKind::kTypeMismatch,
     "2", [](Builder& b) {
       const int64_t null_value = b.function("vm.builtin.null_value");
       b.call(2, b.function("vm.builtin.call_tir_dyn"), {fn(null_value), reg(0), imm(3)});
     }},
    {"match_shape storing without a heap", "vm.builtin.match_shape", "uses the shape heap but none was given",
     graphrt::ErrorKind::kInvalidArgument, "",
     [](Builder& b) { b.call(2, b.function("vm.builtin.match_shape"), {reg(0), kNone, imm(1), imm(1), imm(0)}); }},
    {"match_shape heap slot out of range", "vm.builtin.match_shape", "shape heap index 7 outside the heap of 2",
     graphrt::ErrorKind::kOutOfRange, "", [](Builder& b) {
       b.call(1, b.function("vm.builtin.alloc_shape_heap"), {kVm, imm(2)});
       b.call(2, b.function("vm.builtin.match_shape"), {reg(0), reg(1), imm(1), imm(1), imm(7)});
     }},
    {"match_shape unknown code", "vm.builtin.match_shape", "unknown match_shape code 9", graphrt::ErrorKind::kInvalidArgument, "",
     [](Builder& b) {
       b.call(1, b.function("vm.builtin.alloc_shape_heap"), {kVm, imm(2)});
       b.call(2, b.function("vm.builtin.match_shape"), {reg(0), reg(1), imm(1), imm(9), imm(0)});
     }},
    {"match_shape heap of floats", "vm.builtin.match_shape", "must be an int64 vector, not NDArray", graphrt::ErrorKind::kTypeMismatch,
     "1", [](Builder& b) { b.call(2, b.function("vm.builtin.match_shape"), {reg(0), reg(0), imm(1), imm(1), imm(0)}); }},
    {"make_shape unknown code", "vm.builtin.make_shape", "unknown make_shape code 5", graphrt::ErrorKind::kInvalidArgument, "",
     [](Builder& b) {
       b.call(1, b.function("vm.builtin.alloc_shape_heap"), {kVm, imm(2)});
       b.call(2, b.function("vm.builtin.make_shape"), {reg(1), imm(1), imm(5), imm(0)});
     }},
    {"make_shape negative heap slot", "vm.builtin.make_shape", "shape heap index -1 outside the heap of 2",
     graphrt::ErrorKind::kOutOfRange, "", [](Builder& b) {
       b.call(1, b.function("vm.builtin.alloc_shape_heap"), {kVm, imm(2)});
       b.call(2, b.function("vm.builtin.make_shape"), {reg(1), imm(1), imm(1), imm(-1)});
     }},
    {"alloc_shape_heap negative size", "vm.builtin.alloc_shape_heap", "shape heap size -4 outside",
     graphrt::ErrorKind::kResourceExhausted, "", [](Builder& b) { b.call(2, b.function("vm.builtin.alloc_shape_heap"), {kVm, imm(-4)}); }},
    {"alloc_storage of an overflowing shape", "vm.builtin.alloc_storage", "more elements than fit in 64 bits",
     graphrt::ErrorKind::kInvalidArgument, "", [](Builder& b) {
       b.call(2, b.function("vm.builtin.alloc_storage"),
              {kVm, shape(b, {int64_t{1} << 40, int64_t{1} << 40}), imm(0), dtype(b, kF32)});
     }},
    {"alloc_tensor past the storage", "vm.builtin.alloc_tensor", "does not fit in an array of 64 bytes",
     graphrt::ErrorKind::kOutOfRange, "", [](Builder& b) {
       b.call(1, b.function("vm.builtin.alloc_storage"), {kVm, shape(b, {64}), imm(0), dtype(b, kU8)});
       b.call(2, b.function("vm.builtin.alloc_tensor"), {reg(1), imm(60), shape(b, {4}), dtype(b, kF32)});
     }},
    {"alloc_tensor at a huge offset", "vm.builtin.alloc_tensor", "does not fit", graphrt::ErrorKind::kOutOfRange, "",
     [](Builder& b) {
       b.call(1, b.function("vm.builtin.alloc_storage"), {kVm, shape(b, {64}), imm(0), dtype(b, kU8)});
       b.call(2, b.function("vm.builtin.alloc_tensor"), {reg(1), b.constant(int64_t{1} << 62), shape(b, {4}), dtype(b, kF32)});
     }},
    {"alloc_tensor negative offset", "vm.builtin.alloc_tensor", "negative offset -8", graphrt::ErrorKind::kOutOfRange, "",
     [](Builder& b) {
       b.call(1, b.function("vm.builtin.alloc_storage"), {kVm, shape(b, {64}), imm(0), dtype(b, kU8)});
       b.call(2, b.function("vm.builtin.alloc_tensor"), {reg(1), imm(-8), shape(b, {4}), dtype(b, kF32)});
     }},
    {"alloc_tensor of a tensor", "vm.builtin.alloc_tensor", "must be a storage, not NDArray", graphrt::ErrorKind::kTypeMismatch, "0",
     [](Builder& b) { b.call(2, b.function("vm.builtin.alloc_tensor"), {reg(0), imm(0), shape(b, {1}), dtype(b, kF32)}); }},
    {"reshape to another size", "vm.builtin.reshape", "cannot reshape (2,) to (3,)", graphrt::ErrorKind::kInvalidArgument, "",
     [](Builder& b) { b.call(2, b.function("vm.builtin.reshape"), {reg(0), shape(b, {3})}); }},
    {"tensor_to_shape of floats", "vm.builtin.tensor_to_shape", "expects a 1-d int16/int32/int64 tensor",
     graphrt::ErrorKind::kInvalidArgument, "", [](Builder& b) { b.call(2, b.function("vm.builtin.tensor_to_shape"), {reg(0)}); }},
    {"read_if_cond on floats", "vm.builtin.read_if_cond", "condition must be a non-empty integer or bool tensor",
     graphrt::ErrorKind::kInvalidArgument, "", [](Builder& b) { b.call(2, b.function("vm.builtin.read_if_cond"), {reg(0)}); }},
    {"a builtin short of arguments", "vm.builtin.alloc_tensor", "3 arguments given", graphrt::ErrorKind::kInvalidArgument, "",
     [](Builder& b) { b.call(2, b.function("vm.builtin.alloc_tensor"), {reg(0), imm(0), imm(0)}); }},
};

TEST(RelaxHostileRun, BadBuiltinArgumentsNameTheBuiltin) {
  for (const BadCall& c : kBadCalls) {
    SCOPED_TRACE(c.name);
    Builder b;
    const int64_t main = b.function("main", FunctionKind::kVMFunc);
    b.begin(main, {"x"}, 3);
    c.emit(b);
    b.ret(2);
    const graphrt::Error e = error_of(b.vm(), {graphrt::NDArray::empty({2}, kF32, graphrt::cpu())});
    EXPECT_EQ(e.kind(), c.kind) << e.what();
    expect_mentions(e, c.builtin);
    expect_mentions(e, c.message);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("function"), "main");
    if (*c.argument) {
      EXPECT_EQ(e.context_value("argument"), c.argument) << e.what();
    }
  }
}

// If reads an int register; anything else is the code's error, naming the function.
TEST(RelaxHostileRun, IfOnATensorIsAnError) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  b.begin(main, {"x"}, 1);
  b.if_(0, 1);
  b.ret(0);
  const graphrt::Error e = error_of(b.vm(), {graphrt::NDArray::empty({2}, kF32, graphrt::cpu())});
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kTypeMismatch);
  expect_mentions(e, "If condition is a NDArray, not an int");
  EXPECT_EQ(e.context_value("function"), "main");
}

}  // namespace
