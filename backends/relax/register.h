// The Relax VM back end's single registration point (called from backends/register_all.cc).
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace relax {

void register_backend(Runtime& runtime);

}  // namespace relax
}  // namespace graphrt
