// The builtins the shared fixtures do not reach (closures, shape heap reads,
// prim values, call_tir_dyn, tuples, shape_of), run on small executables made
// with the executable writer and loaded through the registered loader.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graphrt/binary_loader.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "backends/relax/packed_convention.h"
#include "backends/relax/vm_module.h"
#include "relax_builder.h"

namespace {

using namespace graphrt::relax;
using namespace graphrt_test;

const std::vector<Value>& items(const Value& v) { return std::get<graphrt::Ref<TupleObj>>(v)->items; }
const std::vector<int64_t>& dims(const Value& v) { return std::get<graphrt::Ref<ShapeObj>>(v)->dims; }

TEST(RelaxBuiltins, ClosureBindsItsArgumentsAfterTheCallers) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t pair = b.function("pair", FunctionKind::kVMFunc);
  const int64_t make_closure = b.function("vm.builtin.make_closure");
  const int64_t invoke_closure = b.function("vm.builtin.invoke_closure");
  const int64_t make_tuple = b.function("vm.builtin.make_tuple");
  const int64_t check_func = b.function("vm.builtin.check_func_info");
  b.begin(main, {"x"}, 3);
  b.call(1, make_closure, {fn(pair), reg(0)});
  b.call(kVoidRegister, check_func, {reg(1), b.constant(std::make_shared<const std::string>("closure"))});
  b.call(2, invoke_closure, {kVm, reg(1), imm(7)});
  b.ret(2);
  b.begin(pair, {"a", "b"}, 3);
  b.call(2, make_tuple, {reg(0), reg(1)});
  b.ret(2);
  const Value out = run(b.vm(), {int64_t{42}});
  ASSERT_EQ(items(out).size(), 2u);
  EXPECT_EQ(std::get<int64_t>(items(out)[0]), 7);   // the caller's argument first
  EXPECT_EQ(std::get<int64_t>(items(out)[1]), 42);  // then the bound one
}

TEST(RelaxBuiltins, ShapeHeapStoresAndLoadsDimensions) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t heap = b.function("vm.builtin.alloc_shape_heap");
  const int64_t match = b.function("vm.builtin.match_shape");
  const int64_t make_shape = b.function("vm.builtin.make_shape");
  const int64_t shape_of = b.function("vm.builtin.shape_of");
  const int64_t prim = b.function("vm.builtin.make_prim_value");
  const int64_t match_prim = b.function("vm.builtin.match_prim_value");
  const int64_t make_tuple = b.function("vm.builtin.make_tuple");
  const int64_t ctx = b.constant(std::make_shared<const std::string>("ErrorContext(fn=main, loc=param[0], param=x)"));
  b.begin(main, {"x"}, 6);
  b.call(1, heap, {kVm, imm(2)});
  b.call(kVoidRegister, match, {reg(0), reg(1), imm(2), imm(1), imm(0), imm(1), imm(1), ctx});  // n, m
  b.call(kVoidRegister, match_prim, {imm(3), reg(1), imm(3), imm(0), ctx});                    // n == 3
  b.call(2, make_shape, {reg(1), imm(3), imm(1), imm(1), imm(0), imm(5), imm(1), imm(0)});       // (m, 5, n)
  b.call(3, shape_of, {reg(0)});
  b.call(4, prim, {reg(1), imm(1), imm(1)});  // m
  b.call(5, make_tuple, {reg(2), reg(3), reg(4)});
  b.ret(5);
  graphrt::Module vm = b.vm();
  const Value out = run(vm, {graphrt::NDArray::empty({3, 4}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu())});
  EXPECT_EQ(dims(items(out)[0]), (std::vector<int64_t>{4, 5, 3}));
  EXPECT_EQ(dims(items(out)[1]), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(std::get<int64_t>(items(out)[2]), 4);
  // n = 2 then fails the prim-value match against the heap, naming the context.
  try {
    run(vm, {graphrt::NDArray::empty({2, 4}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu())});
    FAIL() << "no error";
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("param=x"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("value is 3, expected 2"), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("function"), "main");
  }
}

// A constant may be read-only memory (a params cache's mapping): match_shape never stores into
// one, whether the constant is the heap itself or reaches it through a view.
TEST(RelaxBuiltins, ShapeHeapIsNeverAConstant) {
  graphrt::NDArray constant = graphrt::NDArray::empty({2, 1}, DLDataType{kDLInt, 64, 1}, graphrt::cpu());
  static_cast<int64_t*>(constant->data)[0] = 11;
  static_cast<int64_t*>(constant->data)[1] = 12;
  // 1-D: the heap itself; 2-D: only its view (reshape) is a heap.
  for (bool through_view : {false, true}) {
    SCOPED_TRACE(through_view ? "a view of the constant" : "the constant");
    Builder b;
    const int64_t main = b.function("main", FunctionKind::kVMFunc);
    const int64_t match = b.function("vm.builtin.match_shape");
    const int64_t match_prim = b.function("vm.builtin.match_prim_value");
    const int64_t reshape = b.function("vm.builtin.reshape");
    const int64_t heap = b.constant(through_view ? constant : constant.view({2}, constant.dtype()));
    b.begin(main, {"x"}, 3);
    if (through_view) {
      b.call(1, reshape, {heap, b.constant(make_shape({2}))});
      b.call(kVoidRegister, match_prim, {imm(3), reg(1), imm(1), imm(0)});
    } else {
      b.call(kVoidRegister, match, {reg(0), heap, imm(1), imm(1), imm(0)});
    }
    b.ret(0);
    try {
      run(b.vm(), {graphrt::NDArray::empty({3}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu())});
      ADD_FAILURE() << "no error";
    } catch (const graphrt::Error& e) {
      EXPECT_NE(std::string(e.what()).find("is a constant of the executable"), std::string::npos) << e.what();
    }
  }
}

TEST(RelaxBuiltins, CallTirDynUnpacksTheShapeIntoIntArguments) {
  std::vector<int64_t> seen;
  graphrt::registry_set("test.relax.record", graphrt::make_function([&seen](const graphrt::TVMArgs& args, graphrt::RetValue*) {
    seen.clear();
    for (int i = 1; i < args.size(); ++i) seen.push_back(args.as_int(i));
    EXPECT_EQ(args.code(0), kTVMNDArrayHandle);
  }));
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t kernel = b.function("test.relax.record");
  const int64_t dyn = b.function("vm.builtin.call_tir_dyn");
  const int64_t null_value = b.function("vm.builtin.null_value");
  b.begin(main, {"x"}, 2);
  b.call(kVoidRegister, dyn, {fn(kernel), reg(0), b.constant(make_shape({6, 9}))});
  b.call(1, null_value, {});
  b.ret(1);
  const Value out = run(b.vm(), {graphrt::NDArray::empty({1}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu())});
  EXPECT_TRUE(std::holds_alternative<std::monostate>(out));
  EXPECT_EQ(seen, (std::vector<int64_t>{6, 9}));
  graphrt::registry_remove("test.relax.record");
}

TEST(RelaxBuiltins, TupleItemsAndChecks) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t make_tuple = b.function("vm.builtin.make_tuple");
  const int64_t getitem = b.function("vm.builtin.tuple_getitem");
  const int64_t check = b.function("vm.builtin.check_tuple_info");
  const int64_t ctx = b.constant(std::make_shared<const std::string>("tuple check"));
  b.begin(main, {"a", "b"}, 4);
  b.call(2, make_tuple, {reg(0), reg(1)});
  b.call(kVoidRegister, check, {reg(2), imm(2), ctx});
  b.call(3, getitem, {reg(2), imm(1)});
  b.ret(3);
  graphrt::Module vm = b.vm();
  EXPECT_EQ(std::get<int64_t>(run(vm, {int64_t{1}, int64_t{2}})), 2);
}

TEST(RelaxBuiltins, IfTakesBothBranchesOnIntAndTensorConditions) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t read = b.function("vm.builtin.read_if_cond");
  const int64_t copy = b.function("vm.builtin.copy");
  b.begin(main, {"c"}, 3);
  b.call(1, read, {reg(0)});      // 0
  b.if_(1, 3);                    // 1: false -> 4
  b.call(2, copy, {imm(10)});     // 2
  b.goto_(2);                     // 3: -> 5
  b.call(2, copy, {imm(20)});     // 4
  b.ret(2);                       // 5
  graphrt::Module vm = b.vm();
  EXPECT_EQ(std::get<int64_t>(run(vm, {int64_t{5}})), 10);
  EXPECT_EQ(std::get<int64_t>(run(vm, {int64_t{0}})), 20);
  graphrt::NDArray flag = graphrt::NDArray::empty({}, DLDataType{kDLUInt, 1, 1}, graphrt::cpu());
  *static_cast<uint8_t*>(flag->data) = 1;
  EXPECT_EQ(std::get<int64_t>(run(vm, {flag})), 10);
  *static_cast<uint8_t*>(flag->data) = 0;
  EXPECT_EQ(std::get<int64_t>(run(vm, {flag})), 20);
}

}  // namespace

namespace {

TEST(RelaxBuiltins, AssertOpFailsWithItsFormattedMessage) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t assert_op = b.function("relax.run.assert_op");
  const int64_t null_value = b.function("vm.builtin.null_value");
  b.begin(main, {"c", "v"}, 3);
  b.call(kVoidRegister, assert_op,
         {reg(0), b.constant(std::make_shared<const std::string>("value {} out of range")), reg(1)});
  b.call(2, null_value, {});
  b.ret(2);
  graphrt::Module vm = b.vm();
  EXPECT_TRUE(std::holds_alternative<std::monostate>(run(vm, {int64_t{1}, int64_t{5}})));
  try {
    run(vm, {int64_t{0}, int64_t{5}});
    FAIL() << "no error";
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Assertion Failed: value 5 out of range"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

graphrt::NDArray host_array(std::vector<int64_t> shape, DLDataType t, const void* data) {
  graphrt::NDArray a = graphrt::NDArray::empty(shape, t, graphrt::cpu());
  a.copy_from_bytes(data, a.nbytes());
  return a;
}

template <typename T>
std::vector<T> values_of(const Value& v) {
  const graphrt::NDArray& a = std::get<graphrt::NDArray>(v);
  std::vector<T> out(a.nbytes() / sizeof(T));
  a.copy_to_bytes(out.data(), a.nbytes());
  return out;
}

// relax.run.nonzero / unique, as numpy.nonzero(atleast_1d(x)) / numpy.unique give them.
TEST(RelaxBuiltins, NonzeroAndUniqueAsNumpyGivesThem) {
  Builder b;
  const int64_t main = b.function("main", FunctionKind::kVMFunc);
  const int64_t nz = b.function("relax.run.nonzero");
  const int64_t uq = b.function("relax.run.unique");
  const int64_t tuple = b.function("vm.builtin.make_tuple");
  const int64_t null = b.function("vm.builtin.null_value");
  b.begin(main, {"x", "y"}, 8);
  b.call(2, nz, {reg(0)});
  b.call(3, null, {});
  b.call(4, uq, {reg(1), imm(1), imm(0), imm(0), imm(0), reg(3)});
  b.call(5, uq, {reg(1), imm(0), imm(0), imm(0), imm(0)});
  b.call(6, tuple, {reg(2), reg(4), reg(5)});
  b.ret(6);
  graphrt::Module vm = b.vm();
  const float x[6] = {0.f, 1.5f, -0.f, 0.f, NAN, 2.f};  // 2x3: non-zero at (0,1), (1,1), (1,2)
  const int32_t y[7] = {3, 1, 3, -2, 1, 7, -2};
  const Value r = run(vm, {host_array({2, 3}, DLDataType{kDLFloat, 32, 1}, x), host_array({7}, DLDataType{kDLInt, 32, 1}, y)});
  EXPECT_EQ(values_of<int64_t>(items(r)[0]), (std::vector<int64_t>{0, 1, 1, 1, 1, 2}));
  EXPECT_EQ(std::get<graphrt::NDArray>(items(r)[0]).shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of<int32_t>(items(r)[1]), (std::vector<int32_t>{-2, 1, 3, 7}));
  EXPECT_EQ(values_of<int32_t>(items(r)[2]), (std::vector<int32_t>{3, 1, -2, 7}));
}

}  // namespace
