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

void check_device_available(DLDevice dev) { device_api(dev); }

DeviceAPI* device_api(DLDevice dev) {
  int type = dev.device_type == kDLCUDAHost ? kDLCPU : dev.device_type;
  DeviceAPI* api = device_api_or_null(type);
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

}  // namespace graphrt
