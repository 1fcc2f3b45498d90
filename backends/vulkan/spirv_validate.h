// SPIR-V validation with SPIRV-Tools (the system's static library), for the
// Vulkan environment matching each shader's SPIR-V version: a malformed
// shader is refused here, before any driver parses it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace vulkan_backend {

// "" when `words` is a valid SPIR-V module for Vulkan, else the validator's
// diagnostic (one line, cut to a few hundred characters).
std::string validate_spirv(const std::vector<uint32_t>& words);

}  // namespace vulkan_backend
}  // namespace graphrt
