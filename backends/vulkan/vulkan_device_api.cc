#include "backends/vulkan/vulkan_device_api.h"

#include <algorithm>
#include <cstdlib>

#include "backends/vulkan/vulkan_driver_pin.h"
#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"

namespace graphrt {
namespace vulkan_backend {

namespace {

// Where the private address space starts, and the gap between two buffers'
// ranges (so that no pointer one past a buffer's end names the next one).
constexpr uintptr_t kAddressBase = uintptr_t(0x10) << 40;
constexpr uintptr_t kAddressAlignment = uintptr_t(1) << 16;

thread_local int tls_device = 0;

std::string dev_name(int id) { return "vulkan:" + std::to_string(id); }

size_t bucket_size(size_t nbytes) {
  constexpr size_t kMin = 256;
  constexpr size_t kMiB = size_t(1) << 20;
  if (nbytes <= kMin) return kMin;
  if (nbytes <= kMiB) {
    size_t b = kMin;
    while (b < nbytes) b <<= 1;
    return b;
  }
  return (nbytes + kMiB - 1) / kMiB * kMiB;
}

// TVM's order when several devices exist: discrete, integrated, virtual, CPU.
int type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

}  // namespace

std::shared_ptr<VulkanDeviceAPI> vulkan_device_api() {
  auto* api = dynamic_cast<VulkanDeviceAPI*>(runtime().device_api_or_null(kDLVulkan));
  if (!api) throw Error(ErrorKind::kNotFound, "the default runtime has no Vulkan device API of the vulkan back end");
  return api->shared_from_this();
}

VulkanDeviceAPI::VulkanDeviceAPI(std::string loader_path)
    : loader_path_(std::move(loader_path)), next_address_(kAddressBase) {}

VulkanDeviceAPI::~VulkanDeviceAPI() {
  forget_at_exit(this);
  shutdown();
}

void VulkanDeviceAPI::ensure_init() {
  std::call_once(init_once_, [this] {
    loader_ = VulkanLoader::open(loader_path_);
    if (!loader_.ok()) {
      init_error_ = loader_.error;
      return;
    }
    try {
      create_instance();
    } catch (const Error& e) {
      init_error_ = e.message();
      return;
    }
    shut_down_at_exit(this);  // after the instance exists: before the driver's exit-time destructors
  });
}

void VulkanDeviceAPI::create_instance() {
  uint32_t version = VK_API_VERSION_1_0;
  if (loader_.vkEnumerateInstanceVersion) loader_.vkEnumerateInstanceVersion(&version);
  version = std::min<uint32_t>(version, VK_API_VERSION_1_3);
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "graphrt";
  app.pEngineName = "graphrt";
  app.apiVersion = version;
  auto info = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;
  VkResult r = loader_.vkCreateInstance(&info, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw Error(ErrorKind::kDevice, "no Vulkan driver found by " + loader_.path + " (vkCreateInstance: " +
                                        describe_result(r) + "; install one, e.g. Debian mesa-vulkan-drivers)");
  if (r != VK_SUCCESS) throw Error(ErrorKind::kDevice, "vkCreateInstance failed: " + describe_result(r));
  pin_loaded_vulkan_drivers();
  loader_.instance_api_version = version;
  std::string missing = loader_.resolve_instance(instance_);
  if (!missing.empty()) throw Error(ErrorKind::kDevice, loader_.path + " lacks Vulkan instance entry points: " + missing);
  uint32_t n = 0;
  r = loader_.vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> handles(n);
  if (r == VK_SUCCESS && n) r = loader_.vkEnumeratePhysicalDevices(instance_, &n, handles.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    throw Error(ErrorKind::kDevice, "vkEnumeratePhysicalDevices failed: " + describe_result(r));
  handles.resize(n);
  for (VkPhysicalDevice h : handles) {
    PhysicalDeviceInfo p;
    p.handle = h;
    loader_.vkGetPhysicalDeviceProperties(h, &p.properties);
    if (p.properties.apiVersion < VK_API_VERSION_1_1) continue;  // TVM's shaders need 1.1 (SPIR-V 1.3 storage)
    physical_.push_back(p);
  }
  std::stable_sort(physical_.begin(), physical_.end(), [](const PhysicalDeviceInfo& a, const PhysicalDeviceInfo& b) {
    return type_rank(a.properties.deviceType) < type_rank(b.properties.deviceType);
  });
  if (physical_.size() > static_cast<size_t>(kMaxVulkanDevices)) physical_.resize(kMaxVulkanDevices);
}

std::string VulkanDeviceAPI::init_error() {
  ensure_init();
  return init_error_;
}

int VulkanDeviceAPI::device_count() {
  ensure_init();
  return init_error_.empty() ? static_cast<int>(physical_.size()) : 0;
}

std::string VulkanDeviceAPI::device_description(int id) {
  if (id < 0 || id >= device_count()) return "";
  const VkPhysicalDeviceProperties& p = physical_[id].properties;
  return std::string(p.deviceName) + " (Vulkan " + std::to_string(VK_API_VERSION_MAJOR(p.apiVersion)) + "." +
         std::to_string(VK_API_VERSION_MINOR(p.apiVersion)) + ")";
}

void VulkanDeviceAPI::check_available(DLDevice dev) {
  ensure_init();
  if (!init_error_.empty()) throw Error(ErrorKind::kDevice, init_error_);
  if (shut_down_.load()) throw Error(ErrorKind::kFailedPrecondition, "the Vulkan back end is shut down (process exit)");
  int count = static_cast<int>(physical_.size());
  if (count == 0)
    throw Error(ErrorKind::kDevice,
                "no Vulkan device: the loader found no driver with a Vulkan 1.1 device (install one, e.g. Debian "
                "mesa-vulkan-drivers for the CPU device lavapipe)");
  if (dev.device_id < 0 || dev.device_id >= count)
    throw Error(ErrorKind::kOutOfRange,
                "no Vulkan device " + std::to_string(dev.device_id) + " (" + std::to_string(count) + " devices)");
}

VulkanDevice& VulkanDeviceAPI::device(int id) {
  if (id >= 0 && id < kMaxVulkanDevices) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (devices_[id]) return *devices_[id];
  }
  try {
    check_available(DLDevice{kDLVulkan, id});
  } catch (const Error& e) {
    throw Error(e.kind(), "device " + dev_name(id) + " is unavailable: " + e.message());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!devices_[id]) devices_[id] = std::make_unique<VulkanDevice>(loader_, physical_[id], id);
  return *devices_[id];
}

int VulkanDeviceAPI::current_device() const { return tls_device; }

void VulkanDeviceAPI::set_device(DLDevice dev) {
  device(dev.device_id);
  tls_device = dev.device_id;
}

// --- Allocations.

uintptr_t VulkanDeviceAPI::pool_alloc(int device_id, size_t nbytes) {
  VulkanDevice& dev = device(device_id);
  const size_t bucket = bucket_size(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find({device_id, bucket});
    if (it != free_.end()) {
      uintptr_t address = it->second;
      free_.erase(it);
      allocations_[address].in_use = true;
      return address;
    }
  }
  std::unique_ptr<VulkanBuffer> buffer = dev.create_buffer(bucket);
  std::lock_guard<std::mutex> lock(mutex_);
  uintptr_t address = next_address_;
  next_address_ += (bucket + 2 * kAddressAlignment - 1) / kAddressAlignment * kAddressAlignment;
  Allocation& a = allocations_[address];
  a.buffer = std::move(buffer);
  a.device_id = device_id;
  a.bucket = bucket;
  a.in_use = true;
  return address;
}

void VulkanDeviceAPI::pool_free(uintptr_t address) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (shut_down_.load()) return;  // the buffers went with their devices
  auto it = allocations_.find(address);
  if (it == allocations_.end() || !it->second.in_use) return;
  it->second.in_use = false;
  free_.emplace(std::make_pair(it->second.device_id, it->second.bucket), address);
}

void* VulkanDeviceAPI::alloc(DLDevice dev, size_t nbytes, size_t alignment) {
  if (alignment > kAddressAlignment)
    throw Error(ErrorKind::kUnsupported, "Vulkan allocations are " + std::to_string(kAddressAlignment) +
                                             "-byte aligned; " + std::to_string(alignment) + " was requested")
        .with("device", dev_name(dev.device_id));
  return reinterpret_cast<void*>(pool_alloc(dev.device_id, nbytes));
}

void VulkanDeviceAPI::free(DLDevice, void* ptr) {
  if (ptr) pool_free(reinterpret_cast<uintptr_t>(ptr));
}

void* VulkanDeviceAPI::alloc_workspace(DLDevice dev, size_t nbytes) { return alloc(dev, nbytes, 64); }

void VulkanDeviceAPI::free_workspace(DLDevice dev, void* ptr) { free(dev, ptr); }

bool VulkanDeviceAPI::try_resolve(const void* ptr, BufferRef* out) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin()) return false;
  --it;
  const Allocation& a = it->second;
  if (!a.in_use || address - it->first > a.buffer->size) return false;
  *out = BufferRef{a.buffer.get(), a.device_id, address - it->first};
  return true;
}

BufferRef VulkanDeviceAPI::resolve(const void* ptr, const std::string& what) {
  BufferRef ref;
  if (try_resolve(ptr, &ref)) return ref;
  throw Error(ErrorKind::kInvalidArgument, what + " is not Vulkan device memory of this runtime (a host pointer, "
                                                  "a freed buffer, or another device's)");
}

void VulkanDeviceAPI::destroy_all_buffers_locked() {
  for (auto& entry : allocations_) {
    Allocation& a = entry.second;
    if (a.buffer && devices_[a.device_id]) devices_[a.device_id]->destroy_buffer(*a.buffer);
  }
  allocations_.clear();
  free_.clear();
}

void VulkanDeviceAPI::release_pipeline(int device_id, std::unique_ptr<VulkanPipeline> pipeline) {
  if (!pipeline || shut_down_.load() || device_id < 0 || device_id >= kMaxVulkanDevices) return;
  VulkanDevice* dev = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dev = devices_[device_id].get();
  }
  if (dev) dev->destroy_pipeline(*pipeline);
}

void VulkanDeviceAPI::shutdown() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (shut_down_.exchange(true)) return;
  for (auto& d : devices_) {
    if (d) d->synchronize();
  }
  destroy_all_buffers_locked();
  for (auto& d : devices_) d.reset();
  if (instance_ && loader_.vkDestroyInstance) loader_.vkDestroyInstance(instance_, nullptr);
  instance_ = VK_NULL_HANDLE;
}

// --- Copies.

void VulkanDeviceAPI::copy(const DLTensor* from, DLTensor* to, void* stream) {
  (void)stream;
  const size_t n = tensor_nbytes(from);
  if (n == 0) return;
  const char* src = static_cast<const char*>(from->data) + from->byte_offset;
  char* dst = static_cast<char*>(to->data) + to->byte_offset;
  const bool from_gpu = from->device.device_type == kDLVulkan;
  const bool to_gpu = to->device.device_type == kDLVulkan;
  auto in_range = [n](const BufferRef& r, const char* what) {
    if (r.offset + n > r.buffer->size)
      throw Error(ErrorKind::kOutOfRange, std::string("Vulkan copy of ") + std::to_string(n) + " bytes runs past the " +
                                              what + " buffer (" + std::to_string(r.buffer->size) + " bytes, offset " +
                                              std::to_string(r.offset) + ")");
  };
  if (from_gpu && to_gpu) {
    BufferRef s = resolve(src, "the copy's source");
    BufferRef d = resolve(dst, "the copy's destination");
    in_range(s, "source");
    in_range(d, "destination");
    if (s.device_id == d.device_id) {
      device(s.device_id).copy(*s.buffer, s.offset, *d.buffer, d.offset, n);
    } else {
      std::vector<char> host(n);
      device(s.device_id).read(*s.buffer, s.offset, host.data(), n);
      device(d.device_id).write(*d.buffer, d.offset, host.data(), n);
    }
  } else if (to_gpu) {
    BufferRef d = resolve(dst, "the copy's destination");
    in_range(d, "destination");
    device(d.device_id).write(*d.buffer, d.offset, src, n);
  } else if (from_gpu) {
    BufferRef s = resolve(src, "the copy's source");
    in_range(s, "source");
    device(s.device_id).read(*s.buffer, s.offset, dst, n);
  } else {
    throw Error(ErrorKind::kUnsupported,
                "Vulkan copy between " + device_to_string(from->device) + " and " + device_to_string(to->device));
  }
}

void VulkanDeviceAPI::synchronize(DLDevice dev, void* stream) {
  (void)stream;
  device(dev.device_id).synchronize();
}

}  // namespace vulkan_backend
}  // namespace graphrt
