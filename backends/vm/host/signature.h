// Calling-convention signatures (IREE's cconv strings).
//
//   cconv   := "0" args [ "_" results ]     e.g. "0ii_i" = (i32, i32) -> i32
//   args    := "v" | item*                  "v" alone = no values
//   results := "v" | item*
//   item    := "i" | "I" | "f" | "F" | "r" | "C" type+ "D"
// i=i32 I=i64 f=f32 F=f64 r=ref; C..D = variadic span of tuples of the
// enclosed types (arguments only). Link-time checks compare the canonical
// form (canonical_signature) so "0", "0v" and "0v_v" are the same signature.
#pragma once

#include <string>
#include <vector>

#include "backends/vm/host/vm_value.h"

namespace graphrt {
namespace vm {

struct SignatureItem {
  ValueType type = ValueType::kI32;   // for scalars and refs
  bool variadic = false;              // a C..D span
  std::vector<ValueType> tuple;       // span element tuple
};

struct Signature {
  std::vector<SignatureItem> args;
  std::vector<SignatureItem> results;

  bool is_variadic() const;
  // Flat scalar types (only valid when not variadic).
  std::vector<ValueType> arg_types() const;
  std::vector<ValueType> result_types() const;
  std::string to_string() const;  // canonical cconv
};

// Throws graphrt::Error ("malformed signature ...") on bad input.
Signature parse_signature(const std::string& cconv);
std::string canonical_signature(const std::string& cconv);

// Checks that a flat Value list matches the items (variadic spans given as an
// i32 count followed by count tuples). `what` names the list in errors.
void check_values(const std::vector<SignatureItem>& items, const Value* values, size_t count,
                  const std::string& what);
inline void check_values(const std::vector<SignatureItem>& items, const std::vector<Value>& values,
                         const std::string& what) {
  check_values(items, values.data(), values.size(), what);
}

}  // namespace vm
}  // namespace graphrt
