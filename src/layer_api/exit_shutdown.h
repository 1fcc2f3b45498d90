// Device APIs over a driver that tears itself down from the process's exit handlers: the CUDA
// driver registers its teardown at cuInit, an OpenCL ICD or a Vulkan driver while it is loaded.
// An instance still holding driver objects then (pooled blocks, queues, a Vulkan device) must
// release them first, so every back end's instance whose driver is up is listed here and shut
// down by one exit handler (src/memory/exit_shutdown.cc), registered again after each listing
// and so after that driver's own exit work, which therefore runs after it.
#pragma once

namespace graphrt {

class ExitShutdown {
 public:
  // Releases what the instance holds of its driver. Called at most once from the exit handler,
  // and may be called again by the instance's own destructor: it must be idempotent.
  virtual void shutdown() = 0;

 protected:
  ~ExitShutdown() = default;
};

// Lists `instance` to be shut down at exit. Call once its driver is loaded and initialised.
void shut_down_at_exit(ExitShutdown* instance);
// Takes `instance` off the list (from its destructor); nothing when it is not listed.
void forget_at_exit(ExitShutdown* instance);

}  // namespace graphrt
