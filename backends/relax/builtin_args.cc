#include "backends/relax/builtin.h"

namespace graphrt {
namespace relax {

Error BuiltinArgs::error(const std::string& message, ErrorKind kind) const {
  return Error(kind, std::string(name_) + ": " + message).with("builtin", name_);
}

Error BuiltinArgs::type_error(int i, const char* what, const char* expected) const {
  return error(std::string(what) + " (argument " + std::to_string(i) + ") must be " + expected + ", not " +
                   value_kind_name(at(i)),
               ErrorKind::kTypeMismatch)
      .with("argument", std::to_string(i));
}

void BuiltinArgs::require(int count, const char* usage) const {
  if (n_ < count) throw error(std::string("takes ") + usage + "; " + std::to_string(n_) + " arguments given");
}

Error BuiltinArgs::missing(int i) const {
  return error("argument " + std::to_string(i) + " missing (" + std::to_string(n_) + " given)");
}

int64_t BuiltinArgs::as_int(int i, const char* what) const {
  const Value& v = at(i);
  if (const int64_t* p = std::get_if<int64_t>(&v)) return *p;
  throw type_error(i, what, "an int");
}

NDArray BuiltinArgs::as_tensor(int i, const char* what) const {
  const Value& v = at(i);
  if (const NDArray* p = std::get_if<NDArray>(&v)) return *p;
  throw type_error(i, what, "a tensor");
}

const ShapeObj& BuiltinArgs::as_shape(int i, const char* what) const {
  const Value& v = at(i);
  if (const auto* p = std::get_if<Ref<ShapeObj>>(&v)) return **p;
  throw type_error(i, what, "a shape");
}

const Ref<TupleObj>& BuiltinArgs::as_tuple(int i, const char* what) const {
  const Value& v = at(i);
  if (const auto* p = std::get_if<Ref<TupleObj>>(&v)) return *p;
  throw type_error(i, what, "a tuple");
}

DLDataType BuiltinArgs::as_dtype(int i, const char* what) const {
  const Value& v = at(i);
  if (const DLDataType* p = std::get_if<DLDataType>(&v)) return *p;
  if (const StringRef* s = std::get_if<StringRef>(&v)) return dtype_from_string(**s);
  throw type_error(i, what, "a data type");
}

std::string BuiltinArgs::as_string(int i, const char* what) const {
  const Value& v = at(i);
  if (const StringRef* s = std::get_if<StringRef>(&v)) return **s;
  throw type_error(i, what, "a string");
}

const std::string& BuiltinArgs::error_context(int i) const {
  static const std::string none;
  if (i >= n_) return none;
  const Value& v = *argv_[i];
  if (const StringRef* s = std::get_if<StringRef>(&v)) return **s;
  return none;
}

int64_t* BuiltinArgs::heap(int i, int64_t* size) const {
  const Value& v = at(i);
  *size = 0;
  if (std::holds_alternative<std::monostate>(v)) return nullptr;
  const NDArray* t = std::get_if<NDArray>(&v);
  if (!t || t->dtype() != DLDataType{kDLInt, 64, 1} || t->shape().size() != 1)
    throw type_error(i, "shape heap", "an int64 vector");
  if (t->device().device_type != kDLCPU)
    throw error("the shape heap (argument " + std::to_string(i) + ") must be a host tensor", ErrorKind::kUnsupported)
        .with("argument", std::to_string(i));
  *size = t->shape()[0];
  return reinterpret_cast<int64_t*>(static_cast<char*>((*t)->data) + (*t)->byte_offset);
}

}  // namespace relax
}  // namespace graphrt
