// The one list of device-API instances shut down at exit (src/layer_api/exit_shutdown.h).
// Process-wide because the drivers' teardowns are: they run from the process's exit handlers,
// whichever runtime's instance loaded the driver.
#include "layer_api/exit_shutdown.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace graphrt {

namespace {

struct LiveInstances {
  std::mutex mutex;
  std::vector<ExitShutdown*> instances;
};

LiveInstances& live_instances() {
  static auto* live = new LiveInstances();  // never destroyed: read by the exit handler
  return *live;
}

// Every registration runs this; the first to run (the last registered) shuts every listed
// instance down and empties the list, so the later ones find nothing.
void shut_down_live_instances() {
  LiveInstances& live = live_instances();
  std::lock_guard<std::mutex> lock(live.mutex);
  for (ExitShutdown* instance : live.instances) instance->shutdown();
  live.instances.clear();
}

}  // namespace

void shut_down_at_exit(ExitShutdown* instance) {
  // Registered again for each instance: after the exit work of the driver it has just loaded
  // (a Vulkan or OpenCL instance may load a driver no earlier instance did), so before it.
  std::atexit(shut_down_live_instances);
  LiveInstances& live = live_instances();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.instances.push_back(instance);
}

void forget_at_exit(ExitShutdown* instance) {
  LiveInstances& live = live_instances();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.instances.erase(std::remove(live.instances.begin(), live.instances.end(), instance), live.instances.end());
}

}  // namespace graphrt
