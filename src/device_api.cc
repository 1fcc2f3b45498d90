#include "graphrt/device_api.h"

#include <map>
#include <mutex>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"

namespace graphrt {

namespace {
struct DeviceTable {
  std::mutex mutex;
  std::map<int, std::shared_ptr<DeviceAPI>> apis;
};
DeviceTable& table() {
  static DeviceTable* t = new DeviceTable();  // outlives static arrays freed at exit
  return *t;
}
}  // namespace

void register_device_api(int device_type, std::shared_ptr<DeviceAPI> api) {
  std::lock_guard<std::mutex> lock(table().mutex);
  table().apis[device_type] = std::move(api);
}

DeviceAPI* device_api_or_null(int device_type) {
  runtime_init();
  std::lock_guard<std::mutex> lock(table().mutex);
  auto it = table().apis.find(device_type);
  return it == table().apis.end() ? nullptr : it->second.get();
}

DeviceAPI* device_api(DLDevice dev) {
  int type = dev.device_type == kDLCUDAHost ? kDLCPU : dev.device_type;
  DeviceAPI* api = device_api_or_null(type);
  if (!api) throw Error("no device API for " + device_to_string(dev) + " in this build");
  std::string why = api->unavailable_reason(dev);
  if (!why.empty()) throw Error("device " + device_to_string(dev) + " is unavailable: " + why);
  return api;
}

}  // namespace graphrt
