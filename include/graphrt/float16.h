// float16 (IEEE 754 binary16) and bfloat16 values as the raw 16-bit patterns
// tensors store. Narrowing rounds to nearest, ties to even (what numpy, TVM
// and the hardware conversions do); overflow gives infinity, NaN stays NaN
// (made quiet), subnormals are exact. Widening is exact.
#pragma once

#include <cstdint>

namespace graphrt {

uint16_t float16_from_float(float value);
uint16_t float16_from_double(double value);
float float16_to_float(uint16_t bits);

uint16_t bfloat16_from_float(float value);
uint16_t bfloat16_from_double(double value);
float bfloat16_to_float(uint16_t bits);

// From an x87 80-bit extended value (long double on x86), read from its
// 10 bytes; the other architectures' long double is not handled here.
uint16_t float16_from_x87(const void* extended);
uint16_t bfloat16_from_x87(const void* extended);

}  // namespace graphrt
