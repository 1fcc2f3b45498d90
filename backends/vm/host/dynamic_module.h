// Dynamic native modules: VM modules loaded from a shared library through the
// C ABI in vm_dynamic_module_abi.h.
#pragma once

#include <memory>
#include <string>

#include "backends/vm/host/module.h"

namespace graphrt {
namespace vm {

// `address` = "lib.so[@create_fn][?k=v&k2=v2]". dlopens the library, calls the
// creation function with the params and ABI version, checks the returned ABI
// version and every signature, and returns a module that keeps the library
// loaded until the module is destroyed (the library's destroy runs first).
// Throws graphrt::Error with "file"/"symbol" context.
std::shared_ptr<VmModule> load_dynamic_module(const std::string& address);

}  // namespace vm
}  // namespace graphrt
