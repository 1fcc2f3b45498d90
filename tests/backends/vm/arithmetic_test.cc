// Arithmetic, comparisons and conversions on every register type. Expected
// values come from the same operations in plain C++.
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "vm_test_util.h"

namespace {

using namespace vm_test;

const char* kSource = R"(
module arith version 1
func i32ops "0ii_iiiiiiiiii" export
  add.i32 %i2, %i0, %i1
  sub.i32 %i3, %i0, %i1
  mul.i32 %i4, %i0, %i1
  div.s.i32 %i5, %i0, %i1
  rem.s.i32 %i6, %i0, %i1
  and.i32 %i7, %i0, %i1
  xor.i32 %i8, %i0, %i1
  shl.i32 %i9, %i0, %i1
  shr.u.i32 %i10, %i0, %i1
  cmp.lt.s.i32 %i11, %i0, %i1
  ret %i2, %i3, %i4, %i5, %i6, %i7, %i8, %i9, %i10, %i11
end
func i64ops "0II_IIIIi" export
  add.i64 %I2, %I0, %I1
  mul.i64 %I3, %I0, %I1
  div.u.i64 %I4, %I0, %I1
  max.s.i64 %I5, %I0, %I1
  cmp.lt.u.i64 %i0, %I0, %I1
  ret %I2, %I3, %I4, %I5, %i0
end
func f32ops "0ff_fffffi" export
  add.f32 %f2, %f0, %f1
  sub.f32 %f3, %f0, %f1
  mul.f32 %f4, %f0, %f1
  div.f32 %f5, %f0, %f1
  sqrt.f32 %f6, %f0
  cmp.le.f32 %i0, %f0, %f1
  ret %f2, %f3, %f4, %f5, %f6, %i0
end
func f64ops "0FF_FFFFi" export
  add.f64 %F2, %F0, %F1
  mul.f64 %F3, %F0, %F1
  rem.f64 %F4, %F0, %F1
  floor.f64 %F5, %F0
  cmp.eq.f64 %i0, %F0, %F1
  ret %F2, %F3, %F4, %F5, %i0
end
func convert "0if_IfiFi" export
  ext.i32.i64.s %I0, %i0
  cvt.si32.f32 %f1, %i0
  cvt.f32.si32 %i1, %f0
  ext.f32.f64 %F0, %f0
  bitcast.f32.i32 %i2, %f0
  ret %I0, %f1, %i1, %F0, %i2
end
func consts "0_iIfF" export
  const.i32 %i0, -7
  const.i64 %I0, 0x123456789
  const.f32 %f0, 1.5
  const.f64 %F0, -2.25e10
  ret %i0, %I0, %f0, %F0
end
func divzero "0ii_i" export
  div.s.i32 %i2, %i0, %i1
  ret %i2
end
)";

TEST(VmArithmetic, I32) {
  Harness h(kSource);
  for (auto [a, b] : {std::pair<int32_t, int32_t>{17, 5}, {-100, 7}, {INT32_MAX, 3}, {12345, 31}}) {
    auto r = h.call("i32ops", {I(a), I(b)});
    ASSERT_EQ(r.size(), 10u);
    EXPECT_EQ(r[0].i32, static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)));
    EXPECT_EQ(r[1].i32, a - b);
    EXPECT_EQ(r[2].i32, static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b)));
    EXPECT_EQ(r[3].i32, a / b);
    EXPECT_EQ(r[4].i32, a % b);
    EXPECT_EQ(r[5].i32, a & b);
    EXPECT_EQ(r[6].i32, a ^ b);
    EXPECT_EQ(r[7].i32, static_cast<int32_t>(static_cast<uint32_t>(a) << (b & 31)));
    EXPECT_EQ(r[8].i32, static_cast<int32_t>(static_cast<uint32_t>(a) >> (b & 31)));
    EXPECT_EQ(r[9].i32, a < b ? 1 : 0);
  }
}

TEST(VmArithmetic, I64) {
  Harness h(kSource);
  const int64_t a = 0x123456789LL, b = 1000;
  auto r = h.call("i64ops", {L(a), L(b)});
  EXPECT_EQ(r[0].i64, a + b);
  EXPECT_EQ(r[1].i64, a * b);
  EXPECT_EQ(r[2].i64, static_cast<int64_t>(static_cast<uint64_t>(a) / static_cast<uint64_t>(b)));
  EXPECT_EQ(r[3].i64, std::max(a, b));
  EXPECT_EQ(r[4].i32, static_cast<uint64_t>(a) < static_cast<uint64_t>(b) ? 1 : 0);
  auto n = h.call("i64ops", {L(-1), L(2)});  // unsigned view of -1 is huge
  EXPECT_EQ(n[2].i64, static_cast<int64_t>(UINT64_MAX / 2));
  EXPECT_EQ(n[4].i32, 0);
}

TEST(VmArithmetic, F32) {
  Harness h(kSource);
  const float a = 6.25f, b = -1.5f;
  auto r = h.call("f32ops", {F(a), F(b)});
  EXPECT_EQ(r[0].f32, a + b);
  EXPECT_EQ(r[1].f32, a - b);
  EXPECT_EQ(r[2].f32, a * b);
  EXPECT_EQ(r[3].f32, a / b);
  EXPECT_EQ(r[4].f32, std::sqrt(a));
  EXPECT_EQ(r[5].i32, a <= b ? 1 : 0);
}

TEST(VmArithmetic, F64) {
  Harness h(kSource);
  const double a = 10.75, b = 3.0;
  auto r = h.call("f64ops", {D(a), D(b)});
  EXPECT_EQ(r[0].f64, a + b);
  EXPECT_EQ(r[1].f64, a * b);
  EXPECT_EQ(r[2].f64, std::fmod(a, b));
  EXPECT_EQ(r[3].f64, std::floor(a));
  EXPECT_EQ(r[4].i32, 0);
}

TEST(VmArithmetic, ConversionsSaturateAndBitcast) {
  Harness h(kSource);
  auto r = h.call("convert", {I(-5), F(3.75f)});
  EXPECT_EQ(r[0].i64, -5);
  EXPECT_EQ(r[1].f32, -5.0f);
  EXPECT_EQ(r[2].i32, 3);
  EXPECT_EQ(r[3].f64, 3.75);
  uint32_t bits;
  const float f = 3.75f;
  std::memcpy(&bits, &f, 4);
  EXPECT_EQ(static_cast<uint32_t>(r[4].i32), bits);
  auto big = h.call("convert", {I(0), F(1e20f)});
  EXPECT_EQ(big[2].i32, std::numeric_limits<int32_t>::max());
  auto nan = h.call("convert", {I(0), F(std::nanf(""))});
  EXPECT_EQ(nan[2].i32, 0);
}

TEST(VmArithmetic, Constants) {
  Harness h(kSource);
  auto r = h.call("consts", {});
  EXPECT_EQ(r[0].i32, -7);
  EXPECT_EQ(r[1].i64, 0x123456789LL);
  EXPECT_EQ(r[2].f32, 1.5f);
  EXPECT_EQ(r[3].f64, -2.25e10);
}

TEST(VmArithmetic, DivisionByZeroTrapsWithLocation) {
  Harness h(kSource);
  EXPECT_EQ(h.call("divzero", {I(INT32_MIN), I(-1)})[0].i32, INT32_MIN);  // wraps, no host trap
  try {
    h.call("divzero", {I(1), I(0)});
    FAIL() << "expected a trap";
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos);
    EXPECT_EQ(e.context_value("function"), "divzero");
    EXPECT_EQ(e.context_value("offset"), "1");
  }
}

}  // namespace
