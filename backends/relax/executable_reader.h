// Reads a Relax executable record (the bytes after the record's type key).
// Every length, count and tag is checked against what is left; an error names
// the field, and the function or constant it belongs to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/blob_reader.h"
#include "graphrt/runtime.h"
#include "backends/relax/executable.h"

namespace graphrt {
namespace relax {

// The tensor constants are arrays of `runtime`'s CPU (the runtime whose loader reads the
// executable); the overload without one uses the default runtime's.
// The record as the blob stores it: one length-prefixed string holding the executable.
Executable read_executable_record(const Runtime& runtime, BlobReader& reader, const std::string& type_key);
// A TVM v0.22+ module's bytes: the executable itself, nothing around it.
Executable read_executable_bytes(const Runtime& runtime, BlobReader& reader, const std::string& type_key);
// The executable itself (the string's contents).
Executable read_executable(const Runtime& runtime, const uint8_t* data, size_t size, const std::string& type_key);
Executable read_executable(const uint8_t* data, size_t size, const std::string& type_key);

}  // namespace relax
}  // namespace graphrt
