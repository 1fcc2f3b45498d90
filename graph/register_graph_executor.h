// The graph executor's registrations: its blob loader (GraphExecutorFactory),
// tvm.graph_executor.create and the debug executor's functions.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {

void register_graph_executor(Runtime& runtime);

}  // namespace graphrt
