#include "backends/vulkan/vulkan_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "graphrt/error.h"

namespace graphrt {
namespace vulkan_backend {

namespace {

// Dispatches after which a batch is submitted without waiting for a sync:
// bounds what one command buffer holds in a program that never syncs.
constexpr size_t kMaxBatchCommands = 4096;
constexpr uint32_t kSetsPerPool = 1024;
constexpr VkBufferUsageFlags kBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
  for (const VkExtensionProperties& e : list)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// The first memory type with all of `want`, among those `allowed`; -1 if none.
int find_memory_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t allowed, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    if ((allowed & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

VulkanDevice::VulkanDevice(const VulkanLoader& loader, const PhysicalDeviceInfo& physical, int id)
    : loader_(loader), id_(id), name_(physical.properties.deviceName), limits_(physical.properties.limits) {
  create_logical_device(physical.handle);
  choose_memory_types(physical.handle);
  auto pool_info = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = queue_family_;
  check(fn_.vkCreateCommandPool(device_, &pool_info, nullptr, &command_pool_), "vkCreateCommandPool");
  auto alloc = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = command_pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  check(fn_.vkAllocateCommandBuffers(device_, &alloc, &command_buffer_), "vkAllocateCommandBuffers");
  auto fence_info = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  check(fn_.vkCreateFence(device_, &fence_info, nullptr, &fence_), "vkCreateFence");
}

// Children first, then the device: the work in flight is waited for, every
// object made on the device destroyed, and the device last.
VulkanDevice::~VulkanDevice() {
  if (!device_) return;
  fn_.vkDeviceWaitIdle(device_);
  for (VulkanPipeline* p : std::vector<VulkanPipeline*>(live_pipelines_)) destroy_pipeline(*p);
  if (staging_) destroy_buffer(*staging_);
  for (auto& u : uniforms_) destroy_buffer(*u);
  for (VkDescriptorPool pool : descriptor_pools_) fn_.vkDestroyDescriptorPool(device_, pool, nullptr);
  if (fence_) fn_.vkDestroyFence(device_, fence_, nullptr);
  if (command_pool_) fn_.vkDestroyCommandPool(device_, command_pool_, nullptr);
  fn_.vkDestroyDevice(device_, nullptr);
}

void VulkanDevice::check(VkResult r, const std::string& what) const {
  if (r != VK_SUCCESS)
    throw Error(ErrorKind::kDevice, what + " on vulkan:" + std::to_string(id_) + " failed: " + describe_result(r))
        .with("device", "vulkan:" + std::to_string(id_));
}

// The optional features TVM's shaders may declare, enabled where the device
// has them: 64-bit and 16-bit integers, doubles, 8/16-bit storage, float16
// and int8 arithmetic.
void VulkanDevice::create_logical_device(VkPhysicalDevice physical) {
  uint32_t nfamilies = 0;
  loader_.vkGetPhysicalDeviceQueueFamilyProperties(physical, &nfamilies, nullptr);
  std::vector<VkQueueFamilyProperties> families(nfamilies);
  loader_.vkGetPhysicalDeviceQueueFamilyProperties(physical, &nfamilies, families.data());
  bool found = false;
  for (uint32_t i = 0; i < nfamilies && !found; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      queue_family_ = i;
      found = true;
    }
  }
  if (!found)
    throw Error(ErrorKind::kDevice, "Vulkan device '" + name_ + "' has no compute queue").with("device", "vulkan:" + std::to_string(id_));

  uint32_t next = 0;
  loader_.vkEnumerateDeviceExtensionProperties(physical, nullptr, &next, nullptr);
  std::vector<VkExtensionProperties> extensions(next);
  loader_.vkEnumerateDeviceExtensionProperties(physical, nullptr, &next, extensions.data());
  std::vector<const char*> enabled;
  // GRAPHRT_VULKAN_PUSH_DESCRIPTORS=0 takes the descriptor-pool path a device without the
  // extension takes (the tests run both on one device).
  const char* push_env = std::getenv("GRAPHRT_VULKAN_PUSH_DESCRIPTORS");
  bool push_descriptors = has_extension(extensions, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) &&
                          !(push_env && std::string(push_env) == "0");
  if (push_descriptors) enabled.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);

  VkPhysicalDeviceFeatures have{};
  loader_.vkGetPhysicalDeviceFeatures(physical, &have);
  auto want2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  want2.features.shaderInt64 = have.shaderInt64;
  want2.features.shaderInt16 = have.shaderInt16;
  want2.features.shaderFloat64 = have.shaderFloat64;
  auto have11 = vk_struct<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  auto have12 = vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  auto want11 = vk_struct<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  auto want12 = vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  VkPhysicalDeviceProperties props{};
  loader_.vkGetPhysicalDeviceProperties(physical, &props);
  const bool vulkan12 = loader_.vkGetPhysicalDeviceFeatures2 && props.apiVersion >= VK_API_VERSION_1_2 &&
                        loader_.instance_api_version >= VK_API_VERSION_1_2;
  if (vulkan12) {
    auto query = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    query.pNext = &have11;
    have11.pNext = &have12;
    loader_.vkGetPhysicalDeviceFeatures2(physical, &query);
    want11.storageBuffer16BitAccess = have11.storageBuffer16BitAccess;
    want11.uniformAndStorageBuffer16BitAccess = have11.uniformAndStorageBuffer16BitAccess;
    want12.storageBuffer8BitAccess = have12.storageBuffer8BitAccess;
    want12.uniformAndStorageBuffer8BitAccess = have12.uniformAndStorageBuffer8BitAccess;
    want12.shaderFloat16 = have12.shaderFloat16;
    want12.shaderInt8 = have12.shaderInt8;
    want2.pNext = &want11;
    want11.pNext = &want12;
  }

  float priority = 1.0f;
  auto queue_info = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue_info.queueFamilyIndex = queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  auto info = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  info.pNext = &want2;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(enabled.size());
  info.ppEnabledExtensionNames = enabled.data();
  check(loader_.vkCreateDevice(physical, &info, nullptr, &device_), "vkCreateDevice");
  std::string missing = fn_.resolve(loader_, device_);
  if (!missing.empty()) {
    loader_.vkGetDeviceProcAddr(device_, "vkDestroyDevice");
    auto destroy = reinterpret_cast<PFN_vkDestroyDevice>(loader_.vkGetDeviceProcAddr(device_, "vkDestroyDevice"));
    if (destroy) destroy(device_, nullptr);
    device_ = VK_NULL_HANDLE;
    throw Error(ErrorKind::kDevice, "the Vulkan driver lacks device entry points: " + missing);
  }
  if (push_descriptors)
    fn_.vkCmdPushDescriptorSetKHR =
        reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(loader_.vkGetDeviceProcAddr(device_, "vkCmdPushDescriptorSetKHR"));
  fn_.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
}

// Buffers live in device-local memory; where that is also host visible
// (integrated GPUs, CPU devices) it is mapped and copies need no staging.
void VulkanDevice::choose_memory_types(VkPhysicalDevice physical) {
  VkPhysicalDeviceMemoryProperties props{};
  loader_.vkGetPhysicalDeviceMemoryProperties(physical, &props);
  auto info = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = 256;
  info.usage = kBufferUsage | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;
  VkBuffer probe = VK_NULL_HANDLE;
  check(fn_.vkCreateBuffer(device_, &info, nullptr, &probe), "vkCreateBuffer");
  VkMemoryRequirements req{};
  fn_.vkGetBufferMemoryRequirements(device_, probe, &req);
  fn_.vkDestroyBuffer(device_, probe, nullptr);
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int unified = find_memory_type(props, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
  int local = find_memory_type(props, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  int visible = find_memory_type(props, req.memoryTypeBits, host);
  if (visible < 0)
    throw Error(ErrorKind::kDevice, "Vulkan device '" + name_ + "' has no host-visible coherent memory for copies")
        .with("device", "vulkan:" + std::to_string(id_));
  device_memory_host_visible_ = unified >= 0 || local < 0;
  device_memory_type_ = static_cast<uint32_t>(unified >= 0 ? unified : local >= 0 ? local : visible);
  host_memory_type_ = static_cast<uint32_t>(visible);
}

std::unique_ptr<VulkanBuffer> VulkanDevice::make_buffer(size_t nbytes, uint32_t memory_type, bool map) {
  auto b = std::make_unique<VulkanBuffer>();
  b->size = nbytes;
  auto info = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = nbytes;
  info.usage = kBufferUsage | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(fn_.vkCreateBuffer(device_, &info, nullptr, &b->buffer), "vkCreateBuffer of " + std::to_string(nbytes) + " bytes");
  VkMemoryRequirements req{};
  fn_.vkGetBufferMemoryRequirements(device_, b->buffer, &req);
  auto alloc = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = memory_type;
  VkResult r = fn_.vkAllocateMemory(device_, &alloc, nullptr, &b->memory);
  if (r == VK_SUCCESS) r = fn_.vkBindBufferMemory(device_, b->buffer, b->memory, 0);
  if (r == VK_SUCCESS && map) r = fn_.vkMapMemory(device_, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
  if (r != VK_SUCCESS) {
    destroy_buffer(*b);
    check(r, "allocating " + std::to_string(nbytes) + " bytes of device memory");
  }
  return b;
}

std::unique_ptr<VulkanBuffer> VulkanDevice::create_buffer(size_t nbytes) {
  return make_buffer(nbytes, device_memory_type_, device_memory_host_visible_);
}

void VulkanDevice::destroy_buffer(VulkanBuffer& b) {
  if (b.mapped) fn_.vkUnmapMemory(device_, b.memory);
  if (b.buffer) fn_.vkDestroyBuffer(device_, b.buffer, nullptr);
  if (b.memory) fn_.vkFreeMemory(device_, b.memory, nullptr);
  b = VulkanBuffer{};
}

// --- Pipelines.

std::unique_ptr<VulkanPipeline> VulkanDevice::create_pipeline(const VulkanKernelPlan& plan,
                                                              const std::vector<uint32_t>& words) {
  auto p = std::make_unique<VulkanPipeline>();
  const std::string kernel = " for kernel " + quoted_name(plan.name);
  try {
    auto shader = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    shader.codeSize = words.size() * 4;
    shader.pCode = words.data();
    check(fn_.vkCreateShaderModule(device_, &shader, nullptr, &p->shader), "vkCreateShaderModule" + kernel);
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (uint32_t i = 0; i < plan.num_buffers; ++i)
      bindings.push_back({i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    if (plan.uses_uniform_buffer)
      bindings.push_back({static_cast<uint32_t>(plan.num_buffers), VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1,
                          VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    auto set_info = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    if (has_push_descriptors()) set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    set_info.bindingCount = static_cast<uint32_t>(bindings.size());
    set_info.pBindings = bindings.data();
    check(fn_.vkCreateDescriptorSetLayout(device_, &set_info, nullptr, &p->set_layout), "vkCreateDescriptorSetLayout" + kernel);
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, plan.scalar_bytes()};
    const bool push_constants = !plan.uses_uniform_buffer && !plan.scalars.empty();
    if (push_constants && range.size > limits_.maxPushConstantsSize)
      throw Error(ErrorKind::kUnsupported, "kernel " + quoted_name(plan.name) + " pushes " + std::to_string(range.size) +
                                               " bytes of constants, the device takes " +
                                               std::to_string(limits_.maxPushConstantsSize));
    auto layout = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &p->set_layout;
    layout.pushConstantRangeCount = push_constants ? 1 : 0;
    layout.pPushConstantRanges = &range;
    check(fn_.vkCreatePipelineLayout(device_, &layout, nullptr, &p->layout), "vkCreatePipelineLayout" + kernel);
    auto info = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = p->shader;
    info.stage.pName = plan.name.c_str();
    info.layout = p->layout;
    check(fn_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &p->pipeline),
          "vkCreateComputePipelines" + kernel);
  } catch (Error& e) {
    destroy_pipeline(*p);
    throw e.with("module", "vulkan").with("function", plan.name);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  live_pipelines_.push_back(p.get());
  return p;
}

void VulkanDevice::destroy_pipeline(VulkanPipeline& p) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_locked();  // the batch may still use it
    live_pipelines_.erase(std::remove(live_pipelines_.begin(), live_pipelines_.end(), &p), live_pipelines_.end());
  }
  if (p.pipeline) fn_.vkDestroyPipeline(device_, p.pipeline, nullptr);
  if (p.layout) fn_.vkDestroyPipelineLayout(device_, p.layout, nullptr);
  if (p.set_layout) fn_.vkDestroyDescriptorSetLayout(device_, p.set_layout, nullptr);
  if (p.shader) fn_.vkDestroyShaderModule(device_, p.shader, nullptr);
  p = VulkanPipeline{};
}

// --- The batch.

void VulkanDevice::begin_batch_locked() {
  if (recording_) return;
  auto begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(fn_.vkBeginCommandBuffer(command_buffer_, &begin), "vkBeginCommandBuffer");
  recording_ = true;
  batch_commands_ = 0;
}

// Everything written so far is made visible to what follows: later
// dispatches and copies on the device, and the host once the batch is done.
void VulkanDevice::barrier_locked(VkPipelineStageFlags src_stage, VkAccessFlags src_access) {
  auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  fn_.vkCmdPipelineBarrier(command_buffer_, src_stage,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                           0, 1, &barrier, 0, nullptr, 0, nullptr);
}

void VulkanDevice::flush_locked() {
  if (!recording_) return;
  recording_ = false;
  check(fn_.vkEndCommandBuffer(command_buffer_), "vkEndCommandBuffer");
  auto submit = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &command_buffer_;
  check(fn_.vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
  check(fn_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  check(fn_.vkResetFences(device_, 1, &fence_), "vkResetFences");
  check(fn_.vkResetCommandBuffer(command_buffer_, 0), "vkResetCommandBuffer");
  for (size_t i = 0; i < descriptor_pool_in_use_ && i < descriptor_pools_.size(); ++i)
    check(fn_.vkResetDescriptorPool(device_, descriptor_pools_[i], 0), "vkResetDescriptorPool");
  descriptor_pool_in_use_ = 0;
  uniforms_in_use_ = 0;
}

void VulkanDevice::synchronize() {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_locked();
}

VkDescriptorSet VulkanDevice::allocate_set_locked(const VulkanPipeline& pipeline) {
  for (;;) {
    if (descriptor_pool_in_use_ == descriptor_pools_.size()) {
      VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * 8},
                                       {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kSetsPerPool}};
      auto info = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
      info.maxSets = kSetsPerPool;
      info.poolSizeCount = 2;
      info.pPoolSizes = sizes;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      check(fn_.vkCreateDescriptorPool(device_, &info, nullptr, &pool), "vkCreateDescriptorPool");
      descriptor_pools_.push_back(pool);
    }
    auto alloc = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    alloc.descriptorPool = descriptor_pools_[descriptor_pool_in_use_];
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &pipeline.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    VkResult r = fn_.vkAllocateDescriptorSets(device_, &alloc, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) check(r, "vkAllocateDescriptorSets");
    ++descriptor_pool_in_use_;  // this pool is full: the next one
  }
}

VulkanBuffer& VulkanDevice::uniform_locked(size_t nbytes) {
  if (uniforms_in_use_ == uniforms_.size()) uniforms_.push_back(make_buffer(256, host_memory_type_, true));
  VulkanBuffer& b = *uniforms_[uniforms_in_use_++];
  if (b.size < nbytes) {
    destroy_buffer(b);
    b = *make_buffer(nbytes, host_memory_type_, true);
  }
  return b;
}

void VulkanDevice::dispatch(const VulkanKernelPlan& plan, const VulkanPipeline& pipeline, const BoundBuffer* buffers,
                            const uint64_t* scalar_slots, const VulkanLaunch& launch) {
  std::lock_guard<std::mutex> lock(mutex_);
  begin_batch_locked();
  fn_.vkCmdBindPipeline(command_buffer_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  const size_t nwrites = plan.num_buffers + (plan.uses_uniform_buffer ? 1 : 0);
  constexpr size_t kInline = 16;
  VkDescriptorBufferInfo infos_inline[kInline];
  VkWriteDescriptorSet writes_inline[kInline];
  std::vector<VkDescriptorBufferInfo> infos_heap;
  std::vector<VkWriteDescriptorSet> writes_heap;
  VkDescriptorBufferInfo* infos = infos_inline;
  VkWriteDescriptorSet* writes = writes_inline;
  if (nwrites > kInline) {
    infos_heap.resize(nwrites);
    writes_heap.resize(nwrites);
    infos = infos_heap.data();
    writes = writes_heap.data();
  }
  for (size_t i = 0; i < plan.num_buffers; ++i) infos[i] = {buffers[i].buffer, buffers[i].offset, buffers[i].range};
  if (plan.uses_uniform_buffer) {
    VulkanBuffer& u = uniform_locked(plan.scalar_bytes());
    std::memcpy(u.mapped, scalar_slots, plan.scalar_bytes());
    infos[plan.num_buffers] = {u.buffer, 0, plan.scalar_bytes()};
  }
  VkDescriptorSet set = has_push_descriptors() ? VK_NULL_HANDLE : allocate_set_locked(pipeline);
  for (size_t i = 0; i < nwrites; ++i) {
    writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = i < plan.num_buffers ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  if (has_push_descriptors()) {
    if (nwrites)
      fn_.vkCmdPushDescriptorSetKHR(command_buffer_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0,
                                    static_cast<uint32_t>(nwrites), writes);
  } else {
    fn_.vkUpdateDescriptorSets(device_, static_cast<uint32_t>(nwrites), writes, 0, nullptr);
    fn_.vkCmdBindDescriptorSets(command_buffer_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0, nullptr);
  }
  if (!plan.uses_uniform_buffer && !plan.scalars.empty())
    fn_.vkCmdPushConstants(command_buffer_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, plan.scalar_bytes(),
                           scalar_slots);
  fn_.vkCmdDispatch(command_buffer_, launch.grid[0], launch.grid[1], launch.grid[2]);
  barrier_locked(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
  if (++batch_commands_ >= kMaxBatchCommands) flush_locked();
}

// --- Copies.

VulkanBuffer& VulkanDevice::staging_locked(size_t nbytes) {
  if (!staging_ || staging_->size < nbytes) {
    if (staging_) destroy_buffer(*staging_);
    size_t size = std::max<size_t>(nbytes, size_t(1) << 20);
    staging_ = make_buffer(size, host_memory_type_, true);
  }
  return *staging_;
}

void VulkanDevice::write(const VulkanBuffer& dst, size_t offset, const void* src, size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  flush_locked();
  if (dst.mapped) {
    std::memcpy(static_cast<char*>(dst.mapped) + offset, src, nbytes);
    return;
  }
  VulkanBuffer& staging = staging_locked(nbytes);
  std::memcpy(staging.mapped, src, nbytes);
  begin_batch_locked();
  VkBufferCopy region{0, offset, nbytes};
  fn_.vkCmdCopyBuffer(command_buffer_, staging.buffer, dst.buffer, 1, &region);
  barrier_locked(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  flush_locked();
}

void VulkanDevice::read(const VulkanBuffer& src, size_t offset, void* dst, size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (src.mapped) {
    flush_locked();
    std::memcpy(dst, static_cast<const char*>(src.mapped) + offset, nbytes);
    return;
  }
  VulkanBuffer& staging = staging_locked(nbytes);
  begin_batch_locked();
  VkBufferCopy region{offset, 0, nbytes};
  fn_.vkCmdCopyBuffer(command_buffer_, src.buffer, staging.buffer, 1, &region);
  barrier_locked(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  flush_locked();
  std::memcpy(dst, staging.mapped, nbytes);
}

void VulkanDevice::copy(const VulkanBuffer& src, size_t src_offset, const VulkanBuffer& dst, size_t dst_offset,
                        size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  begin_batch_locked();
  VkBufferCopy region{src_offset, dst_offset, nbytes};
  fn_.vkCmdCopyBuffer(command_buffer_, src.buffer, dst.buffer, 1, &region);
  barrier_locked(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  if (++batch_commands_ >= kMaxBatchCommands) flush_locked();
}

}  // namespace vulkan_backend
}  // namespace graphrt
