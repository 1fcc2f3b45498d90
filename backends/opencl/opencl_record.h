// The "opencl" module record TVM writes: its format, its function table and
// its OpenCL C source, split into one source per kernel at TVM's
// "// Function: <name>" markers. Pure decoding: no driver needed.
#pragma once

#include <dlpack/dlpack.h>

#include <map>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "src/base/function_table/function_table.h"

namespace graphrt {
namespace opencl_backend {

// TVM's FunctionInfo (the base's one reader of device function tables); its name is the map
// key, the kernel's name in the source.
using OpenclFunctionInfo = DeviceFunctionInfo;

struct OpenclModuleImage {
  std::string fmt;  // "cl": OpenCL C source (the device binary formats are refused)
  std::map<std::string, OpenclFunctionInfo> fmap;
  std::string code;
  // Per marker: the kernel's own program source (what the first marker is
  // preceded by, when anything, comes first in each).
  std::map<std::string, std::string> kernel_sources;
};

// Up to TVM v0.21 the module is a blob record; from v0.22 a library module's
// bytes, whose function table lists per-argument extra tags too.
enum class OpenclPayloadFormat { kRecord, kWithArgExtraTags };

// Reads fmt, fmap and code from `reader` (exactly the record's bytes), then
// checks them: the format is "cl", every function of the table has its
// source. Errors name the module ("opencl"), the function and the field.
OpenclModuleImage decode_opencl_payload(BlobReader& reader, OpenclPayloadFormat format);
// The inverse (kernel_sources is not written), for tests and tools.
std::string encode_opencl_payload(const OpenclModuleImage& image, OpenclPayloadFormat format);

// Splits `code` at lines "// Function: <name>": each kernel's text runs to
// the next marker. Throws for no marker, an empty name or a name twice.
std::map<std::string, std::string> split_kernel_sources(const std::string& code);

// An untrusted name for a message: quoted, cut at 80 characters, control
// characters escaped.
std::string quoted(const std::string& text);

}  // namespace opencl_backend
}  // namespace graphrt
