// Calls of the runtime's global functions from the apps with owned arguments
// (RetValue), which also carry bytes and None (ArgList carries neither).
#pragma once

#include <string>
#include <vector>

#include "graphrt/module.h"
#include "graphrt/packed_func.h"

namespace graphrt_apps {

// The global function `name`; throws graphrt::Error naming it when the
// runtime has none (a libgraphrt built without its back end).
graphrt::PackedFunc global_function(const std::string& name);

graphrt::RetValue call_packed(const graphrt::PackedFunc& f, const std::vector<graphrt::RetValue>& args);

graphrt::RetValue int_arg(int64_t v);
graphrt::RetValue float_arg(double v);
graphrt::RetValue string_arg(std::string s);
graphrt::RetValue bytes_arg(std::string bytes);
graphrt::RetValue module_arg(graphrt::Module m);
graphrt::RetValue function_arg(graphrt::PackedFunc f);
graphrt::RetValue ndarray_arg(graphrt::NDArray a);

}  // namespace graphrt_apps
