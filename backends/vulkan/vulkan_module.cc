#include "backends/vulkan/vulkan_module.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>

#include "graphrt/error.h"
#include "backends/vulkan/spirv_validate.h"
#include "backends/vulkan/vulkan_device_api.h"

namespace graphrt {
namespace vulkan_backend {

namespace {

// SPIRV-Tools' verdict on every shader of the function table, in fmap order
// ("" for a valid one), the shaders shared out over the cores: validation is
// most of what loading a module with large shaders costs.
std::vector<std::string> validate_shaders(const std::vector<const SpirvShader*>& shaders) {
  std::vector<std::string> verdicts(shaders.size());
  const size_t workers = std::min<size_t>(shaders.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < shaders.size(); i = next++) verdicts[i] = validate_spirv(shaders[i]->words);
  };
  std::vector<std::thread> helpers;
  for (size_t w = 1; w < workers; ++w) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  return verdicts;
}

Error module_error(const std::string& function, const std::string& field, const std::string& what) {
  return Error("vulkan function " + quoted_name(function) + " " + what)
      .with("module", "vulkan")
      .with("function", function)
      .with("field", field);
}

}  // namespace

CheckedVulkanModule check_vulkan_module(VulkanModuleImage image) {
  std::vector<const SpirvShader*> shaders;
  for (const auto& entry : image.fmap) {
    auto shader = image.smap.find(entry.first);
    if (shader == image.smap.end()) throw module_error(entry.first, "smap", "has no shader in the module's shader map");
    shaders.push_back(&shader->second);
  }
  const std::vector<std::string> verdicts = validate_shaders(shaders);
  CheckedVulkanModule checked;
  size_t i = 0;
  for (const auto& entry : image.fmap) {
    if (!verdicts[i].empty()) throw module_error(entry.first, "smap", "has invalid SPIR-V: " + verdicts[i]);
    checked.plans.push_back(plan_vulkan_kernel(entry.second, *shaders[i]));
    ++i;
  }
  checked.image = std::move(image);
  return checked;
}

// One kernel's launch state: its plan and, per device, the pipeline made at
// its first launch there.
struct VulkanModuleNode::Kernel {
  const VulkanKernelPlan* plan = nullptr;
  const std::vector<uint32_t>* words = nullptr;
  std::shared_ptr<VulkanDeviceAPI> api;
  std::mutex mutex;
  std::array<std::unique_ptr<VulkanPipeline>, kMaxVulkanDevices> pipelines;
  std::array<std::atomic<VulkanPipeline*>, kMaxVulkanDevices> ready{};

  ~Kernel() {
    for (int id = 0; id < kMaxVulkanDevices; ++id) {
      if (pipelines[id]) api->release_pipeline(id, std::move(pipelines[id]));
    }
  }

  VulkanPipeline& pipeline(VulkanDevice& dev) {
    VulkanPipeline* p = ready[dev.id()].load(std::memory_order_acquire);
    if (p) return *p;
    std::lock_guard<std::mutex> lock(mutex);
    if (!pipelines[dev.id()]) {
      pipelines[dev.id()] = dev.create_pipeline(*plan, *words);
      ready[dev.id()].store(pipelines[dev.id()].get(), std::memory_order_release);
    }
    return *pipelines[dev.id()];
  }

  void launch(const TVMArgs& args) {
    const VulkanKernelPlan& k = *plan;
    VulkanDevice& dev = api->device(api->current_device());
    const VkPhysicalDeviceLimits& limits = dev.limits();
    VulkanLaunch launch = plan_vulkan_launch(k, args.values(), args.size(), limits.maxComputeWorkGroupCount);
    constexpr size_t kInline = 16;
    std::array<BoundBuffer, kInline> buffers_inline;
    std::array<uint64_t, kInline> slots_inline{};
    std::vector<BoundBuffer> buffers_heap;
    std::vector<uint64_t> slots_heap;
    BoundBuffer* buffers = buffers_inline.data();
    uint64_t* slots = slots_inline.data();
    if (k.num_buffers > kInline) {
      buffers_heap.resize(k.num_buffers);
      buffers = buffers_heap.data();
    }
    if (k.scalars.size() > kInline) {
      slots_heap.resize(k.scalars.size());
      slots = slots_heap.data();
    }
    for (size_t i = 0; i < k.num_buffers; ++i) buffers[i] = bind(dev, args.values()[i].v_handle, i, limits);
    pack_vulkan_scalars(k, args.values(), slots);
    try {
      dev.dispatch(k, pipeline(dev), buffers, slots, launch);
    } catch (Error& e) {
      throw e.with("module", "vulkan").with("function", k.name);
    }
  }

  BoundBuffer bind(VulkanDevice& dev, const void* ptr, size_t index, const VkPhysicalDeviceLimits& limits) {
    auto what = [&] { return "buffer argument " + std::to_string(index) + " of kernel " + quoted_name(plan->name); };
    BufferRef ref;
    if (!api->try_resolve(ptr, &ref))
      throw Error(ErrorKind::kInvalidArgument, what() + " is not Vulkan device memory of this runtime (a host "
                                                        "pointer, a freed buffer, or another device's)")
          .with("module", "vulkan")
          .with("function", plan->name);
    if (ref.device_id != dev.id())
      throw Error(ErrorKind::kInvalidArgument, what() + " lives on vulkan:" + std::to_string(ref.device_id) +
                                                   ", the kernel runs on vulkan:" + std::to_string(dev.id()))
          .with("module", "vulkan")
          .with("function", plan->name);
    const VkDeviceSize align = limits.minStorageBufferOffsetAlignment ? limits.minStorageBufferOffsetAlignment : 1;
    if (ref.offset % align != 0)
      throw Error(ErrorKind::kUnsupported, what() + " starts " + std::to_string(ref.offset) +
                                               " bytes into its buffer; the device binds at multiples of " +
                                               std::to_string(align))
          .with("module", "vulkan")
          .with("function", plan->name);
    BoundBuffer b;
    b.buffer = ref.buffer->buffer;
    b.offset = ref.offset;
    b.range = ref.buffer->size - ref.offset;
    if (b.range == 0) b.range = VK_WHOLE_SIZE;
    return b;
  }
};

VulkanModuleNode::VulkanModuleNode(CheckedVulkanModule module, std::shared_ptr<VulkanDeviceAPI> api)
    : module_(std::move(module)), api_(std::move(api)), kernels_(module_.plans.size()) {}

VulkanModuleNode::~VulkanModuleNode() = default;

std::vector<std::string> VulkanModuleNode::function_names() const {
  std::vector<std::string> names;
  for (const auto& entry : module_.image.fmap) names.push_back(entry.first);
  return names;
}

PackedFunc VulkanModuleNode::find_function(const std::string& name, const Module& self) {
  size_t index = 0;
  for (; index < module_.plans.size() && module_.plans[index].name != name; ++index) {
  }
  if (index == module_.plans.size()) return PackedFunc();
  std::shared_ptr<Kernel> kernel;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!kernels_[index]) {
      auto k = std::make_shared<Kernel>();
      k->plan = &module_.plans[index];
      k->words = &module_.image.smap.at(name).words;
      k->api = api_;
      for (auto& r : k->ready) r.store(nullptr);
      kernels_[index] = k;
    }
    kernel = kernels_[index];
  }
  Module owner = self;  // the plan and words live in the module
  return make_function([kernel, owner](const TVMArgs& args, RetValue*) { kernel->launch(args); }, name);
}

Module load_vulkan_module(BlobReader& reader, std::shared_ptr<VulkanDeviceAPI> api) {
  VulkanModuleImage image = decode_vulkan_payload(reader);
  return Module(new VulkanModuleNode(check_vulkan_module(std::move(image)), std::move(api)));
}

}  // namespace vulkan_backend
}  // namespace graphrt
