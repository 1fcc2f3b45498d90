// Device APIs: memory, copies, streams and workspaces per device type.
//
// The core registers CPU; back ends register theirs (CUDA) through
// register_device_api. The graph executor reaches devices only through here.
#pragma once

#include <dlpack/dlpack.h>

#include <memory>
#include <string>

namespace graphrt {

class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  // Why the device cannot be used, or "" when it can.
  virtual std::string unavailable_reason(DLDevice dev) { (void)dev; return ""; }
  virtual void* alloc(DLDevice dev, size_t nbytes, size_t alignment) = 0;
  virtual void free(DLDevice dev, void* ptr) = 0;
  // Copies between two contiguous tensors of equal byte size; at least one
  // of them lives on this API's device type.
  virtual void copy(const DLTensor* from, DLTensor* to, void* stream) = 0;
  virtual void* alloc_workspace(DLDevice dev, size_t nbytes) = 0;
  virtual void free_workspace(DLDevice dev, void* ptr) = 0;
  virtual void synchronize(DLDevice dev, void* stream) { (void)dev; (void)stream; }
  virtual void set_stream(DLDevice dev, void* stream) { (void)dev; (void)stream; }
  virtual void* create_stream(DLDevice dev) { (void)dev; return nullptr; }
  virtual void free_stream(DLDevice dev, void* stream) { (void)dev; (void)stream; }
  virtual void set_device(DLDevice dev) { (void)dev; }
};

void register_device_api(int device_type, std::shared_ptr<DeviceAPI> api);
// The API for `dev`; throws an Error saying why when it is missing or the
// device is unavailable.
DeviceAPI* device_api(DLDevice dev);
DeviceAPI* device_api_or_null(int device_type);

}  // namespace graphrt
