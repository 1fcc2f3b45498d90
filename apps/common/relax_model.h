// The apps' view of a Relax VM executable (TVM's relax.build export): making
// its VM, choosing the function to run, and reading a (nested) tuple result
// through libgraphrt's public API.
#pragma once

#include <string>
#include <vector>

#include "graphrt/runtime.h"

namespace graphrt_apps {

// True when `root` is a Relax executable module (relax.Executable / relax.VMExecutable).
bool is_relax_executable(const graphrt::Module& root);

struct RelaxFunction {
  graphrt::Module vm;                   // initialised for the CPU, pooled allocator
  std::string name;
  std::vector<std::string> param_names; // in argument order
};

// The VM over `root` and its function `name`; "" picks "main", or the only
// function when there is no main. An Error lists the functions otherwise.
RelaxFunction open_relax_function(const graphrt::Module& root, const std::string& name);

// A result as its tensors, depth-first (TVM's output_<i> order); `structure`
// receives its shape ("tensor", "tuple[tensor, tuple[tensor, tensor]]").
std::vector<graphrt::NDArray> flatten_relax_result(const graphrt::RetValue& result, std::string* structure);

}  // namespace graphrt_apps
