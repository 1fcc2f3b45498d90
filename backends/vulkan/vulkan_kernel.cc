#include "backends/vulkan/vulkan_kernel.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"

namespace graphrt {
namespace vulkan_backend {

namespace {

constexpr uint32_t kGLCompute = 5;

Error kernel_error(ErrorKind kind, const VulkanFunctionInfo& info, const std::string& field, const std::string& what) {
  return Error(kind, "vulkan function " + quoted_name(info.name) + ": " + what)
      .with("module", "vulkan")
      .with("function", info.name)
      .with("field", field);
}

std::string dtype_text(DLDataType t) {
  std::string text;
  try {
    text = dtype_to_string(t);
  } catch (const Error&) {
    text = "code " + std::to_string(t.code);
  }
  return text + " {code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
         std::to_string(t.lanes) + "}";
}

bool scalar_kind(DLDataType t, ScalarKind* kind) {
  if (t.lanes != 1) return false;
  if ((t.code == kDLInt || t.code == kDLUInt) && t.bits == 64) *kind = ScalarKind::kInt64;
  else if (t.code == kDLInt && t.bits == 32) *kind = ScalarKind::kInt32;
  else if (t.code == kDLUInt && t.bits == 32) *kind = ScalarKind::kUInt32;
  else if (t.code == kDLFloat && t.bits == 32) *kind = ScalarKind::kFloat32;
  else if (t.code == kDLFloat && t.bits == 64) *kind = ScalarKind::kFloat64;
  else return false;
  return true;
}

void plan_arguments(const VulkanFunctionInfo& info, VulkanKernelPlan& plan) {
  for (size_t i = 0; i < info.arg_types.size(); ++i) {
    DLDataType t = info.arg_types[i];
    if (t.code == kDLOpaqueHandle && t.lanes == 1) {
      if (!plan.scalars.empty())
        throw kernel_error(ErrorKind::kInvalidArgument, info, "arg_types",
                           "argument " + std::to_string(i) + " is a buffer after a scalar (buffers come first)");
      ++plan.num_buffers;
      continue;
    }
    ScalarKind kind;
    if (!scalar_kind(t, &kind))
      throw kernel_error(ErrorKind::kUnsupported, info, "arg_types",
                         "argument " + std::to_string(i) + " has dtype " + dtype_text(t) +
                             ", which cannot be passed to a shader (supported: handle, int32, uint32, int64, "
                             "uint64, float32, float64)");
    plan.scalars.push_back(kind);
  }
  for (size_t i = 0; i < info.arg_extra_tags.size(); ++i) {
    if (info.arg_extra_tags[i] != 0)
      throw kernel_error(ErrorKind::kUnsupported, info, "arg_extra_tags",
                         "argument " + std::to_string(i) + " has extra tag " + std::to_string(info.arg_extra_tags[i]) +
                             " (a CUDA tensor map), which a Vulkan kernel cannot take");
  }
}

void plan_tags(const VulkanFunctionInfo& info, VulkanKernelPlan& plan) {
  bool seen[6] = {false, false, false, false, false, false};
  for (const std::string& tag : info.launch_param_tags) {
    int slot = vulkan_launch_tag_slot(tag);
    if (slot < 0)
      throw kernel_error(ErrorKind::kInvalidArgument, info, "launch_param_tags",
                         "launch tag " + quoted_name(tag) +
                             " is not one of blockIdx.x/y/z, threadIdx.x/y/z (Vulkan has no dynamic shared memory)");
    if (seen[slot])
      throw kernel_error(ErrorKind::kInvalidArgument, info, "launch_param_tags",
                         "launch tag " + quoted_name(tag) + " appears twice");
    seen[slot] = true;
    plan.tag_slots.push_back(slot);
  }
}

std::string binding_list(const std::vector<uint32_t>& bindings) {
  std::string out;
  for (uint32_t b : bindings) out += (out.empty() ? "" : ", ") + std::to_string(b);
  return out.empty() ? "none" : out;
}

// The shader's set-0 storage buffers must be bindings 0..n-1 exactly, for the
// n buffer arguments; the scalars must cover its push-constant block or fill
// the uniform buffer the flag promises, at binding n.
void check_interface(const VulkanFunctionInfo& info, const SpirvShader& shader, VulkanKernelPlan& plan) {
  SpirvInterface iface;
  try {
    iface = reflect_spirv(shader.words);
  } catch (const Error& e) {
    throw kernel_error(ErrorKind::kInvalidArgument, info, "smap", e.message());
  }
  auto entry = iface.entry_points.find(info.name);
  if (entry == iface.entry_points.end() || entry->second.execution_model != kGLCompute)
    throw kernel_error(ErrorKind::kInvalidArgument, info, "smap",
                       "the shader has no GLCompute entry point named as the function");
  if (entry->second.local_size[0] != 0) {
    std::copy(entry->second.local_size, entry->second.local_size + 3, plan.local_size);
    plan.local_size_known = true;
  }
  std::vector<uint32_t> storage;
  bool has_uniform = false;
  for (const SpirvBinding& b : iface.bindings) {
    if (b.set != 0)
      throw kernel_error(ErrorKind::kInvalidArgument, info, "smap",
                         "the shader binds descriptor set " + std::to_string(b.set) + " (only set 0 is bound)");
    if (b.kind == BindingKind::kStorageBuffer) storage.push_back(b.binding);
    if (b.kind == BindingKind::kUniformBuffer) {
      if (b.binding != plan.num_buffers)
        throw kernel_error(ErrorKind::kInvalidArgument, info, "smap",
                           "the shader's uniform buffer is at binding " + std::to_string(b.binding) +
                               ", not after its " + std::to_string(plan.num_buffers) + " storage buffers");
      has_uniform = true;
    }
  }
  std::sort(storage.begin(), storage.end());
  bool exact = storage.size() == plan.num_buffers;
  for (size_t i = 0; exact && i < storage.size(); ++i) exact = storage[i] == i;
  if (!exact)
    throw kernel_error(ErrorKind::kInvalidArgument, info, "arg_types",
                       "the function table gives " + std::to_string(plan.num_buffers) +
                           " buffer arguments, the shader binds storage buffers at " + binding_list(storage));
  plan.uses_uniform_buffer = (shader.flag & kShaderUsesUniformBuffer) != 0;
  if (plan.uses_uniform_buffer && !has_uniform)
    throw kernel_error(ErrorKind::kInvalidArgument, info, "flag",
                       "the shader flag asks for a uniform buffer of scalars, the shader declares none");
  if (!plan.uses_uniform_buffer && has_uniform)
    throw kernel_error(ErrorKind::kInvalidArgument, info, "flag",
                       "the shader reads a uniform buffer, its flag says push constants");
  if (plan.uses_uniform_buffer && plan.scalars.empty())
    throw kernel_error(ErrorKind::kInvalidArgument, info, "flag",
                       "the shader flag asks for a uniform buffer, the function has no scalar arguments");
  if (!plan.uses_uniform_buffer && iface.push_constant_bytes > plan.scalar_bytes())
    throw kernel_error(ErrorKind::kInvalidArgument, info, "arg_types",
                       "the shader's push constants take " + std::to_string(iface.push_constant_bytes) +
                           " bytes, the function's " + std::to_string(plan.scalars.size()) + " scalar arguments give " +
                           std::to_string(plan.scalar_bytes()));
}

}  // namespace

int vulkan_launch_tag_slot(const std::string& tag) {
  static const char* kTags[6] = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (int i = 0; i < 6; ++i) {
    if (tag == kTags[i]) return i;
  }
  return -1;
}

VulkanKernelPlan plan_vulkan_kernel(const VulkanFunctionInfo& info, const SpirvShader& shader) {
  VulkanKernelPlan plan;
  plan.name = info.name;
  plan_arguments(info, plan);
  plan_tags(info, plan);
  check_interface(info, shader, plan);
  return plan;
}

VulkanLaunch plan_vulkan_launch(const VulkanKernelPlan& plan, const TVMValue* values, int num_values,
                                const uint32_t max_grid[3]) {
  auto fail = [&](ErrorKind kind, const std::string& what) {
    return Error(kind, "vulkan kernel " + quoted_name(plan.name) + ": " + what)
        .with("module", "vulkan")
        .with("function", plan.name);
  };
  if (num_values < 0 || static_cast<size_t>(num_values) != plan.expected_args())
    throw fail(ErrorKind::kTypeMismatch,
               "expects " + std::to_string(plan.expected_args()) + " arguments (" + std::to_string(plan.num_buffers) +
                   " buffers, " + std::to_string(plan.scalars.size()) + " scalars, " +
                   std::to_string(plan.tag_slots.size()) + " launch extents), got " + std::to_string(num_values));
  VulkanLaunch launch;
  uint32_t workgroup[3] = {1, 1, 1};
  const size_t base = plan.num_buffers + plan.scalars.size();
  static const char* kNames[6] = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (size_t i = 0; i < plan.tag_slots.size(); ++i) {
    int slot = plan.tag_slots[i];
    int64_t v = values[base + i].v_int64;
    int64_t limit = slot < 3 ? static_cast<int64_t>(max_grid[slot]) : static_cast<int64_t>(UINT32_MAX);
    if (v < 0 || v > limit)
      throw fail(ErrorKind::kOutOfRange, std::string("launch extent ") + kNames[slot] + " = " + std::to_string(v) +
                                             " is out of range (0.." + std::to_string(limit) + ")")
          .with("field", "launch_param_tags");
    uint32_t extent = v == 0 ? 1 : static_cast<uint32_t>(v);
    if (slot < 3) launch.grid[slot] = extent;
    else workgroup[slot - 3] = extent;
  }
  if (plan.local_size_known) {
    for (int d = 0; d < 3; ++d) {
      if (workgroup[d] != plan.local_size[d])
        throw fail(ErrorKind::kInvalidArgument,
                   std::string("launch extent ") + kNames[3 + d] + " = " + std::to_string(workgroup[d]) +
                       " differs from the shader's LocalSize " + std::to_string(plan.local_size[d]))
            .with("field", "launch_param_tags");
    }
  }
  return launch;
}

void pack_vulkan_scalars(const VulkanKernelPlan& plan, const TVMValue* values, uint64_t* slots) {
  for (size_t i = 0; i < plan.scalars.size(); ++i) {
    const TVMValue& v = values[plan.num_buffers + i];
    slots[i] = 0;
    switch (plan.scalars[i]) {
      case ScalarKind::kInt64:
        std::memcpy(&slots[i], &v.v_int64, 8);
        break;
      case ScalarKind::kFloat64:
        std::memcpy(&slots[i], &v.v_float64, 8);
        break;
      case ScalarKind::kInt32: {
        int32_t x = static_cast<int32_t>(v.v_int64);
        std::memcpy(&slots[i], &x, 4);
        break;
      }
      case ScalarKind::kUInt32: {
        uint32_t x = static_cast<uint32_t>(v.v_int64);
        std::memcpy(&slots[i], &x, 4);
        break;
      }
      case ScalarKind::kFloat32: {
        float x = static_cast<float>(v.v_float64);
        std::memcpy(&slots[i], &x, 4);
        break;
      }
    }
  }
}

}  // namespace vulkan_backend
}  // namespace graphrt
