// The IREE executable back end's one registration point (called from
// backends/register_all.cc): the "iree_executable" blob record.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace iree_executable {

void register_backend(Runtime& runtime);

}  // namespace iree_executable
}  // namespace graphrt
