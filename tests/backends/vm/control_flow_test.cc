// Loops, recursion, branch tables, selects, fail.
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include "vm_packed_values.h"
#include "vm_test_util.h"

namespace {

using namespace vm_test;

const std::string kSource = std::string("module flow version 1\n# sum of 0..n-1 with a counted loop\n") + kSumFunction + R"(
# recursive fibonacci through internal calls
func fib "0i_i" export
entry:
  const.i32 %i1, 2
  cmp.lt.s.i32 %i2, %i0, %i1
  br_if %i2, base, rec
base:
  ret %i0
rec:
  const.i32 %i3, 1
  sub.i32 %i4, %i0, %i3
  call @fib(%i4) -> (%i5)
  sub.i32 %i4, %i4, %i3
  call @fib(%i4) -> (%i6)
  add.i32 %i7, %i5, %i6
  ret %i7
end

func classify "0i_i" export
entry:
  br_table %i0, other, [zero, one, two]
zero:
  const.i32 %i1, 100
  ret %i1
one:
  const.i32 %i1, 200
  ret %i1
two:
  const.i32 %i1, 300
  ret %i1
other:
  const.i32 %i1, -1
  ret %i1
end

func pick "0iFF_F" export
  select.f64 %F2, %i0, %F0, %F1
  ret %F2
end

func check_positive "0i_i" export
entry:
  cmp.lt.s.i32 %i1, %i0, %i2
  br_if %i1, bad, good
bad:
  fail %i0, "value must be positive"
good:
  ret %i0
end

func spin "0_v" export
entry:
  br entry
end
)";

int32_t fib(int32_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

TEST(VmControlFlow, LoopSum) {
  Harness h(kSource);
  for (int32_t n : {0, 1, 10, 1000}) {
    int32_t expected = 0;
    for (int32_t k = 0; k < n; ++k) expected += k;
    EXPECT_EQ(h.call("sum", {I(n)})[0].i32, expected) << n;
  }
}

TEST(VmControlFlow, RecursiveFib) {
  Harness h(kSource);
  for (int32_t n : {0, 1, 2, 10, 20}) EXPECT_EQ(h.call("fib", {I(n)})[0].i32, fib(n)) << n;
}

TEST(VmControlFlow, BranchTable) {
  Harness h(kSource);
  const int32_t expected[] = {100, 200, 300};
  for (int32_t k = -2; k < 6; ++k) {
    EXPECT_EQ(h.call("classify", {I(k)})[0].i32, (k >= 0 && k < 3) ? expected[k] : -1) << k;
  }
}

TEST(VmControlFlow, Select) {
  Harness h(kSource);
  EXPECT_EQ(h.call("pick", {I(1), D(1.5), D(2.5)})[0].f64, 1.5);
  EXPECT_EQ(h.call("pick", {I(0), D(1.5), D(2.5)})[0].f64, 2.5);
}

TEST(VmControlFlow, FailCarriesMessageAndLocation) {
  Harness h(kSource);
  EXPECT_EQ(h.call("check_positive", {I(3)})[0].i32, 3);
  try {
    h.call("check_positive", {I(-4)});
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.message(), "value must be positive");
    EXPECT_EQ(e.context_value("function"), "check_positive");
    EXPECT_EQ(e.context_value("status"), "-4");
  }
}

TEST(VmControlFlow, BudgetStopsInfiniteLoop) {
  Harness h(kSource);
  graphrt::vm::Stack stack;
  stack.set_budget(1000);
  EXPECT_THROW(h.context->invoke("flow.spin", {}, stack), graphrt::Error);
  EXPECT_EQ(stack.depth(), 0u);
}

TEST(VmControlFlow, DeepRecursionIsAnError) {
  Harness h(kSource);
  // fib(n) recursion depth is n; beyond the frame limit it must fail cleanly.
  EXPECT_THROW(h.call("fib", {I(5000)}), graphrt::Error);
}

}  // namespace
