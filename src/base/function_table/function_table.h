// TVM's function table of a device module (the `fmap` of a cuda, opencl or vulkan record):
// per kernel, its key (the kernel's name, as TVM's loaders take it) and TVM's FunctionInfo:
// a name, the argument dtypes, the launch parameter tags and, from TVM v0.22 (where the record
// is a library module's bytes), one i32 extra tag per argument. The one reader and writer of
// that layout; each back end checks what its launcher can pass (the extra tags, the tags).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"

namespace graphrt {

struct DeviceFunctionInfo {
  std::string name;  // set to the key when read: TVM v0.18 writes the FunctionInfo's own name empty
  std::vector<DLDataType> arg_types;
  std::vector<std::string> launch_param_tags;
  std::vector<int32_t> arg_extra_tags{};  // empty in the older layout (an initializer: brace-made infos may omit it)
};

using DeviceFunctionTable = std::map<std::string, DeviceFunctionInfo>;

enum class FunctionTableLayout {
  kRecord,            // up to TVM v0.21: a blob record's table
  kWithArgExtraTags,  // TVM v0.22+: each FunctionInfo ends with its arguments' extra tags
};

// Reads the table (its count, then each key and FunctionInfo) from `reader`. `module` ("cuda")
// names the fields in the reader's messages. A key given twice is an Error naming the function
// (context "function", "entry offset", "field" fmap).
DeviceFunctionTable read_function_table(BlobReader& reader, const std::string& module, FunctionTableLayout layout);
// The inverse: each FunctionInfo as it is (in the newer layout, its arg_extra_tags as given).
void write_function_table(BlobWriter& writer, const DeviceFunctionTable& table, FunctionTableLayout layout);

}  // namespace graphrt
