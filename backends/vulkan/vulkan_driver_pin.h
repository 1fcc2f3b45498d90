// Keeps the Vulkan drivers (ICDs) the loader opened mapped until the process ends.
//
// The loader dlcloses a driver when its last instance is destroyed (the back end destroys its
// instance at exit). Drivers keep process-wide state in their globals, made once and never
// freed (Mesa's lavapipe: its CPU topology on AMD CPUs, LLVM's options), and unmapping them
// turns that state into unreachable memory: a leak report naming no module, in every program
// that used the device. Pinned, the state stays reachable from the driver's globals, a second
// instance finds its driver already set up, and a report of a real leak in a driver names it.
#pragma once

namespace graphrt {
namespace vulkan_backend {

// Marks every loaded object that exports vk_icdGetInstanceProcAddr (a Vulkan driver) as
// never to be unloaded. Call after vkCreateInstance, which loads them.
void pin_loaded_vulkan_drivers();

}  // namespace vulkan_backend
}  // namespace graphrt
