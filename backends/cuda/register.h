// The CUDA back end's one registration point (called from
// backends/register_all.cc): the "cuda" loadbinary handler and the kDLCUDA
// DeviceAPI. Registering does not open the driver; that happens on first use.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace cuda_backend {

void register_backend(Runtime& runtime);

}  // namespace cuda_backend
}  // namespace graphrt
