// The apps' view of a Relax VM executable (TVM's relax.build export): making
// its VM, choosing the function to run, and reading a (nested) tuple result
// through libgraphrt's public API.
#pragma once

#include <string>
#include <vector>

#include <memory>

#include "graphrt/relax_vm.h"
#include "graphrt/runtime.h"
#include "graphrt/session.h"
#include "graphrt/value.h"

namespace graphrt_apps {

// A parameter as the function's code checks it: the session layer's TensorSpec
// (graphrt/session.h, from the executable's checks; no text is parsed here) in
// the fields the apps and the server read, with the VM's text for messages.
struct RelaxParamSignature {
  std::string text;                // "float32[n0, 784]", "float32[...]", "?"
  bool known = false;              // a tensor of known dtype and rank
  DLDataType dtype{0, 0, 0};
  std::vector<int64_t> dims;       // -1 where not fixed
  std::vector<int64_t> symbols;    // the symbolic variable of a -1 dimension, else -1
};

struct RelaxFunction {
  graphrt::Module vm;                   // the VM module (relax->module()), for its TVM face
  std::shared_ptr<graphrt::RelaxVM> relax;  // the VM, typed (graphrt/relax_vm.h)
  std::string name;
  std::vector<std::string> param_names; // in argument order
  std::vector<RelaxParamSignature> params;
};

// The VM over `root` and its function `name`; "" picks "main", or the only
// function when there is no main (graphrt::Model::function: an Error lists the functions otherwise).
// `dev`: where the VM runs (a device other than the CPU comes first, the host last, as TVM lists them).
RelaxFunction open_relax_function(const graphrt::Module& root, const std::string& name,
                                  DLDevice dev = DLDevice{kDLCPU, 0});

// "main(x: float32[n0, 784], w: ?)" for each VM function of `root`: its
// parameters with what its code checks of them.
std::vector<std::string> relax_function_signatures(const graphrt::Module& root);

// A result as its tensors, depth-first (TVM's output_<i> order); `structure`
// receives its shape ("tensor", "tuple[tensor, tuple[tensor, tensor]]"). An
// int or float (R.Prim) comes out as a 0-d int64 / float64 array ("int",
// "float"), a shape (R.Shape) as a 1-d int64 array ("shape").
std::vector<graphrt::NDArray> flatten_relax_result(const graphrt::Value& result, std::string* structure);

}  // namespace graphrt_apps
