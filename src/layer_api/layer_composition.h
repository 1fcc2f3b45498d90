// The core's one hook into the layers above it. runtime() calls it once, while
// creating the Runtime, after the core's own registrations; modules/register_all.cc
// defines it (it registers the graph executor and every back end built in,
// each into the runtime it is given), so the core names no graph and no back end.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {

void register_layers_above_core(Runtime& runtime);

}  // namespace graphrt
