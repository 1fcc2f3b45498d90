// What a compute shader declares, read from its SPIR-V words: entry points
// with their workgroup size, the descriptor bindings and the push-constant
// block's size. Enough to check a TVM function table against its shader
// before a driver sees either. The words must already be valid SPIR-V
// (spirv_validate.h); this reader still never reads past them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace graphrt {
namespace vulkan_backend {

enum class BindingKind { kStorageBuffer, kUniformBuffer, kOther };

struct SpirvBinding {
  uint32_t set = 0;
  uint32_t binding = 0;
  BindingKind kind = BindingKind::kOther;
};

struct SpirvEntryPoint {
  uint32_t execution_model = 0;  // 5: GLCompute
  uint32_t local_size[3] = {0, 0, 0};  // 0 when not given as a LocalSize literal
};

struct SpirvInterface {
  std::map<std::string, SpirvEntryPoint> entry_points;
  std::vector<SpirvBinding> bindings;
  uint32_t push_constant_bytes = 0;  // 0: no push-constant block
};

// Throws graphrt::Error (kInvalidArgument) for words that are not a SPIR-V module.
SpirvInterface reflect_spirv(const std::vector<uint32_t>& words);

}  // namespace vulkan_backend
}  // namespace graphrt
