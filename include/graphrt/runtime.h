// Umbrella header of graphrt's C++ API.
#pragma once

#include "graphrt/binary_loader.h"
#include "graphrt/device_api.h"
#include "graphrt/error.h"
#include "graphrt/library.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"
#include "graphrt/packed_func.h"
#include "graphrt/registry.h"

namespace graphrt {

// Registers the built-in handlers, devices and back ends once; every public
// entry point calls it, so users normally need not.
void runtime_init();
// Defined in modules/register_all.cc: the back ends' registration calls.
void register_builtin_modules();
// Defined in graph/: the graph executor's registrations.
void register_graph_executor();
// Loads a plugin .so that registers more handlers/functions through its
// `extern "C" int graphrt_plugin_init(void)`.
void load_plugin(const std::string& path);

inline DLDevice cpu(int id = 0) { return DLDevice{kDLCPU, id}; }
inline DLDevice cuda(int id = 0) { return DLDevice{kDLCUDA, id}; }

}  // namespace graphrt
