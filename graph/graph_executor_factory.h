// The GraphExecutorFactory blob record (spec §2.1) and its module (§6.5).
#pragma once

#include "graphrt/graph_executor.h"

namespace graphrt {

struct FactoryContents {
  std::string graph_json;
  ParamList params;
  std::string module_name;
};

// The factory contents of a module tree's root, or null when the root is not
// a GraphExecutorFactory.
const FactoryContents* factory_contents(const Module& module);
void register_graph_executor_factory();

}  // namespace graphrt
