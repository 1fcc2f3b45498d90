// The "vulkan" module's bytes as TVM writes them: the format string, the
// function table (argument types and launch tags) and one SPIR-V shader per
// function. Parsing only; nothing here needs a driver.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "src/base/function_table/function_table.h"

namespace graphrt {
namespace vulkan_backend {

// SPIRVShader's flag bit 0: the scalar arguments travel in a uniform buffer
// bound after the storage buffers, not in push constants.
constexpr uint32_t kShaderUsesUniformBuffer = 1;
constexpr uint32_t kSpirvMagic = 0x07230203;

// TVM's FunctionInfo (the base's one reader of device function tables), always in the layout
// with extra tags.
using VulkanFunctionInfo = DeviceFunctionInfo;

struct SpirvShader {
  uint32_t flag = 0;
  std::vector<uint32_t> words;
};

// How the shader map's values are laid out. TVM v0.24 and later wrap each
// shader as a bytes value (a u64 length first); v0.22 and v0.23 write it bare.
enum class ShaderMapLayout { kWrapped, kBare };

struct VulkanModuleImage {
  std::string fmt;
  std::map<std::string, VulkanFunctionInfo> fmap;
  std::map<std::string, SpirvShader> smap;
  ShaderMapLayout layout = ShaderMapLayout::kWrapped;
};

// Reads the whole record from `reader` (exactly its bytes, nothing after the
// last field). Which layout the shader map has is found by parsing: the
// wrapped one is tried first, the bare one when that does not fit. Errors
// carry the reader's origin and offset and name the function at fault.
VulkanModuleImage decode_vulkan_payload(BlobReader& reader);
// The inverse, for tests, tools and the fuzz corpus.
std::string encode_vulkan_payload(const VulkanModuleImage& image);

// A name from the file, fit for an error message: quoted, at most 64
// characters, non-printable bytes escaped.
std::string quoted_name(const std::string& name);

}  // namespace vulkan_backend
}  // namespace graphrt
