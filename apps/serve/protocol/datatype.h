// The Open Inference Protocol's tensor datatypes ("FP32", "INT64", ...) and
// their mapping to the DLPack types that graphrt's models use.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace graphrt_serve {

enum class Datatype {
  kBool, kUint8, kUint16, kUint32, kUint64, kInt8, kInt16, kInt32, kInt64, kFp16, kFp32, kFp64, kBf16, kBytes,
};

// False when `name` is not a datatype of the protocol's table (BF16 included, as Triton has it).
bool datatype_from_name(const std::string& name, Datatype* out);
const char* datatype_name(Datatype type);
// Bytes per element; 0 for BYTES (variable length).
size_t datatype_size(Datatype type);

// The model-side type of a protocol datatype (BOOL is TVM's uint1, one byte per element);
// false for BYTES, which no graphrt model takes.
bool datatype_to_dl(Datatype type, DLDataType* out);
// False when a model type has no protocol datatype (vector lanes, int4, ...).
bool datatype_from_dl(DLDataType dl, Datatype* out);
// "float32" for diagnostics.
std::string dl_type_name(DLDataType dl);

// The element count of `shape`, or false when a dimension is negative or the
// product does not fit in int64 (a hostile shape must not wrap around).
bool checked_numel(const std::vector<int64_t>& shape, int64_t* out);

std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace graphrt_serve
