// graphrt::vm::Value — one typed argument or result crossing a call boundary.
//
// Bytecode frames keep values in typed register banks; Values only exist where
// functions meet (imports, native modules, host invocation). A variadic span
// is carried as an i32 count followed by the flattened tuples, like IREE's ABI
// buffer layout but as a list instead of raw bytes.
#pragma once

#include <cstdint>
#include <string>

#include "backends/vm/host/ref.h"

namespace graphrt {
namespace vm {

enum class ValueType : uint8_t { kI32 = 0, kI64 = 1, kF32 = 2, kF64 = 3, kRef = 4 };
constexpr int kValueTypeCount = 5;

// The calling-convention letter of a type: i I f F r.
char value_type_letter(ValueType type);
const char* value_type_name(ValueType type);

struct Value {
  ValueType type = ValueType::kI32;
  union {
    int32_t i32;
    int64_t i64 = 0;
    float f32;
    double f64;
  };
  VmRef ref;

  static Value from_i32(int32_t v) { Value x; x.type = ValueType::kI32; x.i32 = v; return x; }
  static Value from_i64(int64_t v) { Value x; x.type = ValueType::kI64; x.i64 = v; return x; }
  static Value from_f32(float v) { Value x; x.type = ValueType::kF32; x.f32 = v; return x; }
  static Value from_f64(double v) { Value x; x.type = ValueType::kF64; x.f64 = v; return x; }
  static Value from_ref(VmRef v) { Value x; x.type = ValueType::kRef; x.ref = std::move(v); return x; }

  std::string to_string() const;
};

}  // namespace vm
}  // namespace graphrt
