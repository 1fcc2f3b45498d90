// float16 / bfloat16 conversions (include/graphrt/float16.h). Every narrowing
// goes through one rounding routine fed with an exact (sign, exponent,
// 64-bit significand) triple, so float, double and x87 inputs are each
// rounded once: narrowing a float through double first is exact, no double
// rounding.
#include "abi/float16_abi.h"
#include "graphrt/float16.h"

#include <cstring>

namespace graphrt {

namespace {

struct NarrowFormat {
  int exp_bits;
  int mant_bits;  // stored mantissa bits (no implicit bit)
};
constexpr NarrowFormat kFloat16{5, 10};
constexpr NarrowFormat kBfloat16{8, 7};

uint32_t infinity_bits(NarrowFormat f) { return ((1u << f.exp_bits) - 1) << f.mant_bits; }

// NaN with the source payload's leading bits and the quiet bit set, as
// hardware conversions produce; `payload` is left-aligned in 64 bits.
uint16_t nan_bits(uint32_t sign, uint64_t payload, NarrowFormat f) {
  const uint32_t quiet = 1u << (f.mant_bits - 1);
  return static_cast<uint16_t>(sign | infinity_bits(f) | quiet | static_cast<uint32_t>(payload >> (64 - f.mant_bits)));
}

// sign | round(sig * 2^(exp - 63)) for sig with bit 63 set.
uint16_t round_finite(uint32_t sign, int exp, uint64_t sig, NarrowFormat f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  int biased = exp + bias;        // the result's exponent field if it is normal
  int drop = 63 - f.mant_bits;    // significand bits below the result's last bit
  if (biased <= 0) {              // subnormal result: exponent pinned, more bits go
    drop += 1 - biased;
    biased = 0;
  }
  if (drop > 64) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
  uint64_t kept = drop == 64 ? 0 : sig >> drop;
  const uint64_t rest = drop == 64 ? sig : sig & ((uint64_t{1} << drop) - 1);
  const uint64_t halfway = uint64_t{1} << (drop - 1);
  if (rest > halfway || (rest == halfway && (kept & 1))) ++kept;
  // For a normal result `kept` holds the implicit bit, which adds the 1 back
  // to (biased - 1); a carry out of the mantissa lands in the exponent, and
  // a subnormal that rounds up to 2^mant_bits becomes the smallest normal.
  uint64_t bits = biased > 0 ? (static_cast<uint64_t>(biased - 1) << f.mant_bits) + kept : kept;
  if (bits > infinity_bits(f)) bits = infinity_bits(f);
  return static_cast<uint16_t>(sign | bits);
}

uint16_t narrow_double(double value, NarrowFormat f) {
  uint64_t x;
  std::memcpy(&x, &value, sizeof(x));
  const uint32_t sign = static_cast<uint32_t>(x >> 63) << 15;
  const int exp_field = static_cast<int>((x >> 52) & 0x7ff);
  const uint64_t mant = x & ((uint64_t{1} << 52) - 1);
  if (exp_field == 0x7ff) return mant == 0 ? static_cast<uint16_t>(sign | infinity_bits(f)) : nan_bits(sign, mant << 12, f);
  if (exp_field == 0) return static_cast<uint16_t>(sign);  // zero, or a double subnormal: far below either format
  return round_finite(sign, exp_field - 1023, (mant | (uint64_t{1} << 52)) << 11, f);
}

uint16_t narrow_x87(const void* extended, NarrowFormat f) {
  uint64_t sig;
  uint16_t sign_exp;
  std::memcpy(&sig, extended, 8);
  std::memcpy(&sign_exp, static_cast<const uint8_t*>(extended) + 8, 2);
  const uint32_t sign = static_cast<uint32_t>(sign_exp >> 15) << 15;
  const int exp_field = sign_exp & 0x7fff;
  if (exp_field == 0x7fff) {
    const uint64_t fraction = sig << 1;  // bit 63 is the explicit integer bit
    return fraction == 0 ? static_cast<uint16_t>(sign | infinity_bits(f)) : nan_bits(sign, fraction, f);
  }
  if (exp_field == 0 || sig == 0) return static_cast<uint16_t>(sign);  // zero or far below either format
  int exp = exp_field - 16383;
  while (!(sig >> 63)) {  // an unnormal: normalise it
    sig <<= 1;
    --exp;
  }
  return round_finite(sign, exp, sig, f);
}

}  // namespace

uint16_t float16_from_double(double value) { return narrow_double(value, kFloat16); }
uint16_t float16_from_float(float value) { return narrow_double(static_cast<double>(value), kFloat16); }
uint16_t bfloat16_from_double(double value) { return narrow_double(value, kBfloat16); }
uint16_t bfloat16_from_float(float value) { return narrow_double(static_cast<double>(value), kBfloat16); }
uint16_t float16_from_x87(const void* extended) { return narrow_x87(extended, kFloat16); }
uint16_t bfloat16_from_x87(const void* extended) { return narrow_x87(extended, kBfloat16); }

float float16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  int exp = (bits >> 10) & 0x1f;
  uint32_t mant = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);  // infinity, or NaN with its payload
  } else if (exp == 0 && mant == 0) {
    out = sign;
  } else {
    if (exp == 0) {  // subnormal: normalise into float's wider exponent range
      exp = 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
    }
    out = sign | (static_cast<uint32_t>(exp + 127 - 15) << 23) | (mant << 13);
  }
  float value;
  std::memcpy(&value, &out, sizeof(value));
  return value;
}

float bfloat16_to_float(uint16_t bits) {
  const uint32_t out = static_cast<uint32_t>(bits) << 16;  // bfloat16 is float's upper half
  float value;
  std::memcpy(&value, &out, sizeof(value));
  return value;
}

}  // namespace graphrt
