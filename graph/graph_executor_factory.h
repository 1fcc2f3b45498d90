// The GraphExecutorFactory blob record and its module.
#pragma once

#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"

namespace graphrt {

struct FactoryContents {
  std::string graph_json;
  ParamList params;  // replaced by the factory's use_params_cache (under the factory's lock)
  std::string module_name;
  std::string origin;  // the file the record came from, for errors
};

// The factory contents of a module tree's root, or null when the root is not
// a GraphExecutorFactory.
const FactoryContents* factory_contents(const Module& module);
void register_graph_executor_factory(Runtime& runtime);

// The options of both create_with_options calls (the factory's and
// graphrt.graph_executor.create_with_options), from args[first] (memory-plan
// name, "" for the default) and args[first + 1] (device_graph flag).
GraphExecutorOptions executor_options_from_args(const TVMArgs& args, int first);

}  // namespace graphrt
