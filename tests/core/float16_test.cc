// float16/bfloat16 conversions (graphrt/float16.h) against references built
// independently: widening from the format's definition (ldexp), narrowing by
// searching the sorted table of representable values for the nearest one
// (ties to the even pattern). And the exported helpers' calling conventions:
// what each compiler's generated code passes and reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "abi/float16_abi.h"
#include "graphrt/float16.h"
#include "graphrt/library.h"

namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The value of a finite half pattern, from the IEEE definition.
double half_value(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  const double mag = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  return (h & 0x8000) ? -mag : mag;
}
double bfloat_value(uint16_t b) { return static_cast<double>(bits_float(static_cast<uint32_t>(b) << 16)); }

// Positive patterns 0 .. infinity in value order; the infinity pattern stands
// at max + 1 ulp, where round-to-nearest-even sends everything from max + ulp/2.
struct Table {
  std::vector<double> values;
  uint16_t infinity;
};
Table make_table(uint16_t infinity, double (*value)(uint16_t), double next_after_max) {
  Table t{{}, infinity};
  for (uint32_t p = 0; p < infinity; ++p) t.values.push_back(value(static_cast<uint16_t>(p)));
  t.values.push_back(next_after_max);
  return t;
}
const Table& half_table() {
  static const Table t = make_table(0x7c00, &half_value, 65536.0);
  return t;
}
const Table& bfloat_table() {
  static const Table t = make_table(0x7f80, &bfloat_value, std::ldexp(1.0, 128));
  return t;
}

uint16_t nearest(const Table& t, long double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const long double a = std::fabs(v);
  if (a >= t.values.back()) return sign | t.infinity;
  const size_t hi = std::upper_bound(t.values.begin(), t.values.end(), a,
                                     [](long double x, double y) { return x < y; }) -
                    t.values.begin();
  const size_t lo = hi - 1;
  if (static_cast<long double>(t.values[lo]) == a) return static_cast<uint16_t>(sign | lo);
  const long double down = a - t.values[lo], up = t.values[hi] - a;
  size_t pick = down < up ? lo : up < down ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<uint16_t>(sign | pick);
}

// Values around every representable midpoint: exact ties, and just off them
// by less than a float or a double can hold (what double rounding gets wrong).
std::vector<long double> near_midpoints(const Table& t) {
  std::vector<long double> out;
  for (size_t i = 0; i + 1 < t.values.size(); ++i) {
    const long double mid = (static_cast<long double>(t.values[i]) + t.values[i + 1]) / 2;
    const long double ulp = t.values[i + 1] - t.values[i];
    for (long double d : {0.0L, ulp * 0x1p-30L, ulp * 0x1p-60L, ulp * 0x1p-14L})
      for (long double v : {mid + d, mid - d, -(mid + d)}) out.push_back(v);
  }
  return out;
}

TEST(Float16, WideningIsExactForEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float got = graphrt::float16_to_float(static_cast<uint16_t>(h));
    if (((h >> 10) & 0x1f) == 0x1f) {  // infinity or NaN, payload kept as compiler-rt keeps it
      EXPECT_EQ(float_bits(got), ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13)) << std::hex << h;
    } else {
      ASSERT_EQ(float_bits(got), float_bits(static_cast<float>(half_value(static_cast<uint16_t>(h))))) << std::hex << h;
    }
  }
  for (uint32_t b = 0; b < 0x10000; b += 7)
    EXPECT_EQ(float_bits(graphrt::bfloat16_to_float(static_cast<uint16_t>(b))), b << 16);
}

TEST(Float16, NarrowingRoundsToNearestEven) {
  for (const Table* table : {&half_table(), &bfloat_table()}) {
    const bool half = table == &half_table();
    auto from_double = half ? &graphrt::float16_from_double : &graphrt::bfloat16_from_double;
    auto from_float = half ? &graphrt::float16_from_float : &graphrt::bfloat16_from_float;
    auto from_x87 = half ? &graphrt::float16_from_x87 : &graphrt::bfloat16_from_x87;
    for (long double v : near_midpoints(*table)) {
      const double d = static_cast<double>(v);
      ASSERT_EQ(from_double(d), nearest(*table, d)) << std::hexfloat << d;
      const float f = static_cast<float>(v);
      ASSERT_EQ(from_float(f), nearest(*table, f)) << std::hexfloat << f;
#if defined(__x86_64__) || defined(__i386__)
      ASSERT_EQ(from_x87(&v), nearest(*table, v)) << std::hexfloat << v;
#else
      (void)from_x87;
#endif
    }
    std::mt19937 rng(42);
    for (int i = 0; i < 200000; ++i) {
      const float f = bits_float(static_cast<uint32_t>(rng()));
      if (std::isnan(f)) continue;
      ASSERT_EQ(from_float(f), nearest(*table, f)) << std::hexfloat << f;
    }
  }
}

TEST(Float16, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(graphrt::float16_from_float(inf), 0x7c00);
  EXPECT_EQ(graphrt::float16_from_float(-inf), 0xfc00);
  EXPECT_EQ(graphrt::float16_from_float(-0.0f), 0x8000);
  EXPECT_EQ(graphrt::float16_from_double(1e300), 0x7c00);
  EXPECT_EQ(graphrt::float16_from_double(1e-300), 0x0000);
  EXPECT_EQ(graphrt::float16_from_double(-5e-324), 0x8000);  // a double subnormal
  EXPECT_EQ(graphrt::bfloat16_from_double(1e300), 0x7f80);
  EXPECT_EQ(graphrt::bfloat16_from_float(bits_float(0x00000001)), 0x0000);  // float subnormal below bf16's
  EXPECT_EQ(graphrt::bfloat16_from_float(bits_float(0x00010000)), 0x0001);  // bf16's smallest subnormal
  // NaN stays NaN, quiet, sign and leading payload kept (as hardware conversions do).
  EXPECT_EQ(graphrt::float16_from_float(bits_float(0x7fc00000)), 0x7e00);
  EXPECT_EQ(graphrt::float16_from_float(bits_float(0xff800001)), 0xfe00);  // signalling NaN made quiet
  EXPECT_EQ(graphrt::float16_from_float(bits_float(0x7fa00000)), 0x7f00);
  EXPECT_EQ(graphrt::bfloat16_from_float(bits_float(0x7f800001)), 0x7fc0);
  EXPECT_EQ(graphrt::float16_from_double(std::nan("")), 0x7e00);
}

#if defined(__x86_64__)
// The exported helpers, called the way generated code calls them. A narrowing
// helper must leave the result in %ax (LLVM <= 14, TVM's runtime) and in
// %xmm0 (GCC >= 12, LLVM >= 15): read through both signatures.
template <typename Arg>
void expect_narrowing_abi(const char* name, Arg arg, uint16_t want) {
  void* p = graphrt::runtime_symbol(name);
  ASSERT_NE(p, nullptr) << name;
  const uint16_t in_ax = reinterpret_cast<uint16_t (*)(Arg)>(p)(arg);
  const float in_xmm0 = reinterpret_cast<float (*)(Arg)>(p)(arg);
  EXPECT_EQ(in_ax, want) << name;
  EXPECT_EQ(float_bits(in_xmm0) & 0xffffu, want) << name;
}

TEST(Float16Abi, NarrowingHelpersAnswerInBothRegisters) {
  for (double v : {1.0, -2.5, 65504.0, 1e6, 3.0e-7, 1.0 / 3.0, 0.0}) {
    const float f = static_cast<float>(v);
    const long double x = static_cast<long double>(v) + 0x1p-40L;
    expect_narrowing_abi("__gnu_f2h_ieee", f, graphrt::float16_from_float(f));
    expect_narrowing_abi("__truncsfhf2", f, graphrt::float16_from_float(f));
    expect_narrowing_abi("__truncdfhf2", v, graphrt::float16_from_double(v));
    expect_narrowing_abi("__truncxfhf2", x, graphrt::float16_from_x87(&x));
    expect_narrowing_abi("__truncsfbf2", f, graphrt::bfloat16_from_float(f));
    expect_narrowing_abi("__truncdfbf2", v, graphrt::bfloat16_from_double(v));
    expect_narrowing_abi("__truncxfbf2", x, graphrt::bfloat16_from_x87(&x));
  }
  // Only an 80-bit input shows the x87 path is not rounded through double.
  const long double just_above_tie = 1.0L + 0x1p-11L + 0x1p-60L;
  expect_narrowing_abi("__truncxfhf2", just_above_tie, uint16_t{0x3c01});
}

TEST(Float16Abi, WideningHelpersTakeTheirArgumentWhereCallersPutIt) {
  for (uint16_t h : {uint16_t{0x3c00}, uint16_t{0xc500}, uint16_t{0x0001}, uint16_t{0x7bff}, uint16_t{0xfc00}}) {
    const float want = graphrt::float16_to_float(h);
    // LLVM <= 14: __gnu_h2f_ieee(uint16_t in %di), junk allowed in the upper bits.
    auto gnu = reinterpret_cast<float (*)(uint32_t)>(graphrt::runtime_symbol("__gnu_h2f_ieee"));
    EXPECT_EQ(float_bits(gnu(0xabcd0000u | h)), float_bits(want));
    // GCC / newer LLVM: the _Float16 arrives in the low 16 bits of %xmm0.
    const float in_xmm0 = bits_float(0xabcd0000u | h);
    EXPECT_EQ(float_bits(reinterpret_cast<float (*)(float)>(graphrt::runtime_symbol("__extendhfsf2"))(in_xmm0)),
              float_bits(want));
    EXPECT_EQ(reinterpret_cast<double (*)(float)>(graphrt::runtime_symbol("__extendhfdf2"))(in_xmm0),
              static_cast<double>(want));
    EXPECT_EQ(reinterpret_cast<long double (*)(float)>(graphrt::runtime_symbol("__extendhfxf2"))(in_xmm0),
              static_cast<long double>(want));
    const float bf = bits_float(0xabcd0000u | h);
    EXPECT_EQ(float_bits(reinterpret_cast<float (*)(float)>(graphrt::runtime_symbol("__extendbfsf2"))(bf)),
              static_cast<uint32_t>(h) << 16);
  }
}
#endif

}  // namespace
