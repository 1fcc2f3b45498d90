// The OpenCL back end's one registration point (called from
// backends/register_all.cc): the "opencl" record loaders and the kDLOpenCL
// DeviceAPI. Registering does not open the API; that happens on first use.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace opencl_backend {

void register_backend(Runtime& runtime);

}  // namespace opencl_backend
}  // namespace graphrt
