// Executables that pass the verifier but hand the builtins and the
// interpreter hostile values at run time (what fuzz/relax_run_fuzz.cc
// feeds them): each must end in a graphrt::Error naming the builtin or the
// limit, never in a crash, a huge allocation or a run without end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "modules/relax/interpreter.h"
#include "modules/relax/storage_cache.h"
#include "modules/relax/storage_pool.h"
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
  const Value x = int64_t{1};
  const Value* argv[] = {&x};
  try {
    vm.call(main, argv, 1);
    FAIL() << "no error";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
    expect_mentions(e, "instruction budget");
  }
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
  const Value x = int64_t{1};
  const Value* argv[] = {&x};
  try {
    vm.call(main, argv, 1);
    FAIL() << "no error";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
    expect_mentions(e, "vm.builtin.alloc_shape_heap");
  }
}

}  // namespace
