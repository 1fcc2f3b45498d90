// The contrib sort back end's single registration point (called from backends/register_all.cc).
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace contrib_sort {

void register_backend(Runtime& runtime);

}  // namespace contrib_sort
}  // namespace graphrt
