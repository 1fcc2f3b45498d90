#include "device_graph.h"

#include <exception>

#include "graphrt/log.h"

namespace graphrt {

DeviceGraph::~DeviceGraph() {
  if (!graph_) return;
  try {
    api().capture_free(device_, graph_);
  } catch (const std::exception&) {
    // A destructor cannot report; the driver frees what is left at exit.
  }
}

void DeviceGraph::run(CapturableRun& steps) {
  if (graph_) {
    api().capture_launch(device_, graph_);
    return;
  }
  steps.run_all();
  if (tried_) return;
  tried_ = true;
  std::string why = steps.capture_blocker(&device_);
  if (why.empty()) why = capture(steps);
  if (!graph_) log_warning("device graph capture unavailable, running node by node: " + why);
}

// Captures one run; returns why it could not. The plain run before it already
// produced the outputs, so a capture that fails for any reason (a device that
// cannot capture, a driver error, a call failing while capturing, e.g. a
// capture invalidated by work elsewhere in the process) only costs the
// replays, never the run.
std::string DeviceGraph::capture(CapturableRun& steps) {
  DeviceAPI* device = nullptr;
  try {
    device = &api();
    device->capture_begin(device_);
  } catch (const std::exception& e) {
    return e.what();
  }
  try {
    steps.run_all_marking_steps(device, device_);
  } catch (const std::exception& e) {
    abandon(device);
    return std::string("a call failed while capturing: ") + e.what();
  } catch (...) {
    abandon(device);
    return "a call failed while capturing";
  }
  try {
    graph_ = device->capture_end(device_);
  } catch (const std::exception& e) {
    graph_ = nullptr;
    return e.what();
  }
  return "";
}

// Ends a capture whose run failed and drops what it recorded. Its own failure
// is not reported: the failed call is the reason worth logging.
void DeviceGraph::abandon(DeviceAPI* api) {
  void* partial = nullptr;
  try {
    partial = api->capture_end(device_);
  } catch (const std::exception&) {
    partial = nullptr;
  }
  if (!partial) return;
  try {
    api->capture_free(device_, partial);
  } catch (const std::exception&) {
    // Nothing more can be released; the run goes on node by node.
  }
}

void DeviceGraph::follow_move(const void* old_data, size_t nbytes, void* new_data, const std::vector<uint32_t>& steps,
                              const std::string& blocker) {
  if (!graph_ || old_data == new_data) return;
  std::string why = blocker;
  if (why.empty()) {
    try {
      api().capture_rebind(device_, graph_, old_data, nbytes, new_data, steps.data(), steps.size());
      return;
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  if (!move_warned_)
    log_warning("a zero-copy tensor moved and the captured device graph cannot follow (" + why +
                "): the next run captures again");
  move_warned_ = true;
  drop();
}

void DeviceGraph::drop() {
  void* graph = graph_;
  graph_ = nullptr;
  tried_ = false;
  api().capture_free(device_, graph);
}

}  // namespace graphrt
