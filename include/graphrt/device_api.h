// Device APIs: memory, copies, streams and workspaces per device type.
//
// The core registers CPU; back ends register theirs (CUDA) through
// register_device_api. The graph executor reaches devices only through here.
#pragma once

#include "graphrt/error.h"
#include "graphrt/export.h"

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// Declared here, inside the exported block: a class's first declaration sets its visibility.
class NDArray;
class Runtime;

class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  // Returns when `dev` can be used; otherwise throws graphrt::Error saying
  // why: kDevice when the driver is missing or failed, kOutOfRange for a
  // device id past the devices present.
  virtual void check_available(DLDevice dev) { (void)dev; }
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

  // Whole-graph capture (CUDA graphs): record the work issued on the current
  // stream between capture_begin and capture_end, then replay it with
  // capture_launch. capture_begin and capture_end throw graphrt::Error when
  // the device cannot capture (kUnsupported, kFailedPrecondition) or its
  // driver fails (kDevice); the graph executor then runs node by node.
  virtual void capture_begin(DLDevice dev) {
    (void)dev;
    throw Error(ErrorKind::kUnsupported, "graph capture is not supported on this device");
  }
  virtual void* capture_end(DLDevice dev) {
    (void)dev;
    throw Error(ErrorKind::kUnsupported, "graph capture is not supported on this device");
  }
  virtual void capture_launch(DLDevice dev, void* graph) { (void)dev; (void)graph; }
  virtual void capture_free(DLDevice dev, void* graph) { (void)dev; (void)graph; }

  // Orders the work queued on `dst` after the work queued so far on `src`
  // (null: the thread's current stream), without waiting on the host where
  // the device can (CUDA: an event). The default waits on the host. Declared
  // last so that the slots above keep their places for device APIs built
  // against an older header.
  virtual void sync_stream_from_to(DLDevice dev, void* src, void* dst) {
    (void)dst;
    synchronize(dev, src);
  }

  // While a capture is under way: the work issued from now on belongs to
  // `step` (the graph executor's op index), until the next call. The memory
  // plan gives one address to tensors whose lives do not overlap, so only
  // the steps can tell capture_rebind which uses of an address to move.
  virtual void capture_step(DLDevice dev, uint32_t step) {
    (void)dev;
    (void)step;
  }
  // A tensor moved (zero-copy): where the captured work of `steps` (sorted)
  // uses [old_data, old_data + nbytes), it now uses the same offset from
  // new_data, in later launches of `graph`. Throws graphrt::Error when the
  // graph cannot follow (kUnsupported, or kDevice when the driver refuses);
  // it may then be partly updated and must be freed, not launched.
  virtual void capture_rebind(DLDevice dev, void* graph, const void* old_data, size_t nbytes, void* new_data,
                              const uint32_t* steps, size_t num_steps) {
    (void)dev, (void)graph, (void)old_data, (void)nbytes, (void)new_data, (void)steps, (void)num_steps;
    throw Error(ErrorKind::kUnsupported, "this device cannot update a captured graph");
  }
};

void register_device_api(int device_type, std::shared_ptr<DeviceAPI> api);
// The API for `dev` in the default runtime; throws an Error saying why when it
// is missing (kUnsupported) or the device is unavailable (the device API's kind).
DeviceAPI* device_api(DLDevice dev);
DeviceAPI* device_api_or_null(int device_type);
// Returns when `dev` can be used; throws as device_api does otherwise.
void check_device_available(DLDevice dev);

}  // namespace graphrt
#pragma GCC visibility pop

// The library's own (not exported).
namespace graphrt {

// device_api(dev) in `runtime`.
DeviceAPI* device_api(const Runtime& runtime, DLDevice dev);

// The device APIs of a graph executor's or a Relax VM's devices, resolved once
// from the runtime of the module it was made from: allocations and copies then
// cost no look-up. A device the runtime cannot serve is looked up again where
// it is used, which throws as device_api does. The runtime owns the APIs and
// outlives what it loaded.
class DeviceApis {
 public:
  DeviceApis(const Runtime& runtime, const std::vector<DLDevice>& devices);
  const Runtime& runtime() const { return *runtime_; }
  // The API of `dev`: cached for the devices given, else looked up in the runtime.
  DeviceAPI& of(DLDevice dev) const;
  // NDArray::empty and copy_tensor through these APIs.
  NDArray empty(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev) const;
  void copy(const DLTensor* from, DLTensor* to, void* stream = nullptr) const;
  // NDArray::copy_to_device through these APIs.
  NDArray copy_to_device(const NDArray& array, DLDevice dev) const;
  // NDArray::copy_from_bytes through these APIs: `nbytes` host bytes into `array`.
  void copy_from_bytes(const NDArray& array, const void* data, size_t nbytes) const;

 private:
  const Runtime* runtime_;
  std::vector<std::pair<DLDevice, DeviceAPI*>> cached_;
};

// While it lives, the calling thread's runs (a graph executor's, a Relax VM's) are those of
// `apis`: what generated kernels call with no runtime in hand (TVMBackendAllocWorkspace and
// TVMBackendFreeWorkspace) is served by the run's runtime, not the default. Kernels allocate
// and free their workspace on one thread, within the call, so both reach the same API; tasks
// on the thread pool's workers, outside any scope, reach the default's.
class RunningDeviceApis {
 public:
  explicit RunningDeviceApis(const DeviceApis& apis);
  ~RunningDeviceApis();
  RunningDeviceApis(const RunningDeviceApis&) = delete;
  RunningDeviceApis& operator=(const RunningDeviceApis&) = delete;
  // The API of `dev` for the calling thread: its running scope's, else the default runtime's.
  static DeviceAPI* of(DLDevice dev);

 private:
  const DeviceApis* previous_;
};

}  // namespace graphrt
