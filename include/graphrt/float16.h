// float16 (IEEE 754 binary16) and bfloat16 values as the raw 16-bit patterns
// tensors store. Narrowing rounds to nearest, ties to even (what numpy, TVM
// and the hardware conversions do); overflow gives infinity, NaN stays NaN
// (made quiet), subnormals are exact. Widening is exact.
#pragma once

#include "graphrt/export.h"

#include <cstdint>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

uint16_t float16_from_float(float value);
uint16_t float16_from_double(double value);
float float16_to_float(uint16_t bits);

uint16_t bfloat16_from_float(float value);
uint16_t bfloat16_from_double(double value);
float bfloat16_to_float(uint16_t bits);


}  // namespace graphrt
#pragma GCC visibility pop
