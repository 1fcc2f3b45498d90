// A graph executor's captured device graph (CUDA graphs through the device
// API's capture_* calls): the first run goes node by node (lazy kernel loading
// must happen outside a capture), then one run is captured and later runs
// replay it. A capture that cannot be made only costs the replays: the
// executor keeps running node by node and one warning says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/device_api.h"

namespace graphrt {

// What a DeviceGraph captures: the executor's run, as numbered steps.
class CapturableRun {
 public:
  virtual ~CapturableRun() = default;
  // One plain run of every step (what run() does without a device graph).
  virtual void run_all() = 0;
  // Every step in order, each marked with DeviceAPI::capture_step first.
  virtual void run_all_marking_steps(DeviceAPI* api, DLDevice device) = 0;
  // The one device the steps run on; "" when they can be captured, else why
  // not (then `device` is unspecified).
  virtual std::string capture_blocker(DLDevice* device) const = 0;
};

class DeviceGraph {
 public:
  DeviceGraph() = default;
  ~DeviceGraph();
  DeviceGraph(const DeviceGraph&) = delete;
  DeviceGraph& operator=(const DeviceGraph&) = delete;

  // The executor's device APIs, which capture and replay (they outlive this graph).
  void use(const DeviceApis& apis) { apis_ = &apis; }
  bool active() const { return graph_ != nullptr; }
  DLDevice device() const { return device_; }
  // Replays the capture, or runs plainly and (once) tries to capture.
  void run(CapturableRun& steps);
  // A tensor the capture uses moved from `old_data` to `new_data`: points the
  // capture's `steps` at it. `blocker` non-empty: the move cannot be followed
  // (why). When not followed the capture is dropped (the next run captures
  // again) and a warning is logged, once per executor.
  void follow_move(const void* old_data, size_t nbytes, void* new_data, const std::vector<uint32_t>& steps,
                   const std::string& blocker);

 private:
  std::string capture(CapturableRun& steps);
  void abandon(DeviceAPI* api);
  void drop();

  DeviceAPI& api() const { return apis_->of(device_); }

  const DeviceApis* apis_ = nullptr;
  DLDevice device_{kDLCPU, 0};
  void* graph_ = nullptr;
  bool tried_ = false;
  bool move_warned_ = false;
};

}  // namespace graphrt
