#include "protocol/datatype.h"

#include <limits>

namespace graphrt_serve {

namespace {

struct Entry {
  Datatype type;
  const char* name;
  size_t size;
  DLDataType dl;
};

const Entry kTable[] = {
    {Datatype::kBool, "BOOL", 1, {kDLUInt, 1, 1}},     {Datatype::kUint8, "UINT8", 1, {kDLUInt, 8, 1}},
    {Datatype::kUint16, "UINT16", 2, {kDLUInt, 16, 1}}, {Datatype::kUint32, "UINT32", 4, {kDLUInt, 32, 1}},
    {Datatype::kUint64, "UINT64", 8, {kDLUInt, 64, 1}}, {Datatype::kInt8, "INT8", 1, {kDLInt, 8, 1}},
    {Datatype::kInt16, "INT16", 2, {kDLInt, 16, 1}},    {Datatype::kInt32, "INT32", 4, {kDLInt, 32, 1}},
    {Datatype::kInt64, "INT64", 8, {kDLInt, 64, 1}},    {Datatype::kFp16, "FP16", 2, {kDLFloat, 16, 1}},
    {Datatype::kFp32, "FP32", 4, {kDLFloat, 32, 1}},    {Datatype::kFp64, "FP64", 8, {kDLFloat, 64, 1}},
    {Datatype::kBf16, "BF16", 2, {kDLBfloat, 16, 1}},   {Datatype::kBytes, "BYTES", 0, {kDLOpaqueHandle, 0, 0}},
};

const Entry& entry(Datatype type) { return kTable[static_cast<int>(type)]; }

}  // namespace

bool datatype_from_name(const std::string& name, Datatype* out) {
  for (const Entry& e : kTable) {
    if (name == e.name) {
      *out = e.type;
      return true;
    }
  }
  return false;
}

const char* datatype_name(Datatype type) { return entry(type).name; }
size_t datatype_size(Datatype type) { return entry(type).size; }

bool datatype_to_dl(Datatype type, DLDataType* out) {
  if (type == Datatype::kBytes) return false;
  *out = entry(type).dl;
  return true;
}

bool datatype_from_dl(DLDataType dl, Datatype* out) {
  for (const Entry& e : kTable) {
    if (e.type != Datatype::kBytes && e.dl.code == dl.code && e.dl.bits == dl.bits && dl.lanes == 1) {
      *out = e.type;
      return true;
    }
  }
  return false;
}

std::string dl_type_name(DLDataType dl) {
  const char* code = dl.code == kDLInt ? "int" : dl.code == kDLUInt ? "uint" : dl.code == kDLFloat ? "float"
                     : dl.code == kDLBfloat ? "bfloat" : "handle";
  std::string s = code + std::to_string(dl.bits);
  if (dl.code == kDLUInt && dl.bits == 1) s = "bool";
  if (dl.lanes != 1) s += "x" + std::to_string(dl.lanes);
  return s;
}

bool checked_numel(const std::vector<int64_t>& shape, int64_t* out) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return false;
    n *= d;
  }
  *out = n;
  return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace graphrt_serve
