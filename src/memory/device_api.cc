#include "graphrt/device_api.h"

#include <map>
#include <mutex>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"
#include "runtime_tables.h"

namespace graphrt {

void Runtime::register_device_api(int device_type, std::shared_ptr<DeviceAPI> api) {
  std::lock_guard<std::mutex> lock(tables_->devices_mutex);
  tables_->devices[device_type] = std::move(api);
}

DeviceAPI* Runtime::device_api_or_null(int device_type) const {
  std::lock_guard<std::mutex> lock(tables_->devices_mutex);
  auto it = tables_->devices.find(device_type);
  return it == tables_->devices.end() ? nullptr : it->second.get();
}

void register_device_api(int device_type, std::shared_ptr<DeviceAPI> api) {
  runtime().register_device_api(device_type, std::move(api));
}

DeviceAPI* device_api_or_null(int device_type) { return runtime().device_api_or_null(device_type); }

// Without a back end of its own (a build without CUDA), pinned host memory is
// plain host memory. A registered kDLCUDAHost API (the CUDA back end's) is
// never bypassed: its memory must be page-locked by the driver.
static DeviceAPI* api_for_type(const Runtime& runtime, int type) {
  DeviceAPI* api = runtime.device_api_or_null(type);
  if (!api && type == kDLCUDAHost) api = runtime.device_api_or_null(kDLCPU);
  return api;
}

void check_device_available(DLDevice dev) { device_api(dev); }

DeviceAPI* device_api(DLDevice dev) { return device_api(runtime(), dev); }

DeviceAPI* device_api(const Runtime& runtime, DLDevice dev) {
  DeviceAPI* api = api_for_type(runtime, dev.device_type);
  if (!api) throw Error(ErrorKind::kUnsupported, "no device API for " + device_to_string(dev) + " in this build");
  try {
    api->check_available(dev);
  } catch (const Error& e) {
    Error outer(e.kind(), "device " + device_to_string(dev) + " is unavailable: " + e.message());
    for (const auto& pair : e.context()) outer.with(pair.first, pair.second);
    throw outer;
  }
  return api;
}

DeviceApis::DeviceApis(const Runtime& runtime, const std::vector<DLDevice>& devices) : runtime_(&runtime) {
  cached_.reserve(devices.size());
  for (const DLDevice& dev : devices) {
    // A device that cannot be used fails where it is first used, as it would without the cache.
    DeviceAPI* api = nullptr;
    try {
      api = device_api(runtime, dev);
    } catch (const Error&) {
      api = nullptr;
    }
    cached_.emplace_back(dev, api);
  }
}

DeviceAPI& DeviceApis::of(DLDevice dev) const {
  for (const auto& cached : cached_)
    if (cached.first == dev && cached.second) return *cached.second;
  return *device_api(*runtime_, dev);
}

namespace {
thread_local const DeviceApis* running_apis = nullptr;
}  // namespace

RunningDeviceApis::RunningDeviceApis(const DeviceApis& apis) : previous_(running_apis) { running_apis = &apis; }

RunningDeviceApis::~RunningDeviceApis() { running_apis = previous_; }

DeviceAPI* RunningDeviceApis::of(DLDevice dev) {
  const DeviceApis* apis = running_apis;
  return apis ? &apis->of(dev) : device_api(dev);
}

}  // namespace graphrt
