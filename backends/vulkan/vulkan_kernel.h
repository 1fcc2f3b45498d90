// One Vulkan kernel's call, planned from its function-table entry and checked
// against its shader: which arguments are buffers (bindings 0..n-1 of set 0),
// how the scalars fill 8-byte slots, which launch value sets which extent.
// Pure: no driver.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/tvm_abi.h"
#include "backends/vulkan/spirv_reflect.h"
#include "backends/vulkan/vulkan_payload.h"

namespace graphrt {
namespace vulkan_backend {

// How a scalar argument fills its 8-byte slot (TVM's ArgUnion64).
enum class ScalarKind : uint8_t { kInt64, kInt32, kUInt32, kFloat32, kFloat64 };

struct VulkanKernelPlan {
  std::string name;
  size_t num_buffers = 0;
  std::vector<ScalarKind> scalars;
  std::vector<int> tag_slots;  // per launch tag: 0..2 grid x/y/z, 3..5 workgroup x/y/z
  bool uses_uniform_buffer = false;
  uint32_t local_size[3] = {1, 1, 1};
  bool local_size_known = false;
  size_t expected_args() const { return num_buffers + scalars.size() + tag_slots.size(); }
  uint32_t scalar_bytes() const { return static_cast<uint32_t>(scalars.size() * 8); }
};

// Checks the entry against its shader (already validated SPIR-V) and plans
// the call. Throws graphrt::Error with context module "vulkan", function and
// field (arg_types, arg_extra_tags, launch_param_tags, flag, smap).
VulkanKernelPlan plan_vulkan_kernel(const VulkanFunctionInfo& info, const SpirvShader& shader);

struct VulkanLaunch {
  uint32_t grid[3] = {1, 1, 1};
};

// The grid from the launch values after the arguments, checked: extents
// within [0, max_grid] (0 counts as 1), workgroup extents equal to the
// shader's LocalSize, as many values as the plan takes.
VulkanLaunch plan_vulkan_launch(const VulkanKernelPlan& plan, const TVMValue* values, int num_values,
                                const uint32_t max_grid[3]);

// The scalars' slots, in argument order (values[num_buffers...]).
void pack_vulkan_scalars(const VulkanKernelPlan& plan, const TVMValue* values, uint64_t* slots);

// "blockIdx.x" -> 0 ... "threadIdx.z" -> 5; -1 for anything else.
int vulkan_launch_tag_slot(const std::string& tag);

}  // namespace vulkan_backend
}  // namespace graphrt
