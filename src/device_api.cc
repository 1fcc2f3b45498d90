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
// plain host memory.
static DeviceAPI* api_for_type(int type) {
  DeviceAPI* api = device_api_or_null(type);
  if (!api && type == kDLCUDAHost) api = device_api_or_null(kDLCPU);
  return api;
}

std::string device_unavailable_reason(DLDevice dev) {
  DeviceAPI* api = api_for_type(dev.device_type);
  return api ? api->unavailable_reason(dev)
             : "no device API for device type " + std::to_string(static_cast<int>(dev.device_type)) + " in this build";
}

DeviceAPI* device_api(DLDevice dev) {
  DeviceAPI* api = api_for_type(dev.device_type);
  if (!api) throw Error("no device API for " + device_to_string(dev) + " in this build");
  std::string why = api->unavailable_reason(dev);
  if (!why.empty()) throw Error("device " + device_to_string(dev) + " is unavailable: " + why);
  return api;
}

}  // namespace graphrt
