#include "backends/vm/host/vm_value.h"

#include <sstream>

namespace graphrt {
namespace vm {

const char* object_kind_name(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kBuffer: return "buffer";
    case ObjectKind::kList: return "list";
    case ObjectKind::kTensor: return "tensor";
  }
  return "?";
}

char value_type_letter(ValueType type) {
  static const char kLetters[] = {'i', 'I', 'f', 'F', 'r'};
  return kLetters[static_cast<int>(type)];
}

const char* value_type_name(ValueType type) {
  static const char* const kNames[] = {"i32", "i64", "f32", "f64", "ref"};
  return kNames[static_cast<int>(type)];
}

std::string Value::to_string() const {
  std::ostringstream os;
  switch (type) {
    case ValueType::kI32: os << i32; break;
    case ValueType::kI64: os << i64; break;
    case ValueType::kF32: os << f32; break;
    case ValueType::kF64: os << f64; break;
    case ValueType::kRef: os << (ref ? object_kind_name(ref->kind()) : "null"); break;
  }
  return os.str();
}

}  // namespace vm
}  // namespace graphrt
