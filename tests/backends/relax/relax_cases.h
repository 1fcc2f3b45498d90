// The shared Relax VM fixtures (../shared/fixtures/relax/<case>): their input
// sets as case.json lists them, and a result flattened as TVM's outputs are.
#pragma once

#include <string>
#include <vector>

#include "graphrt/module.h"
#include "graphrt/packed_func.h"

namespace graphrt_test {

// Every CPU case under fixtures/relax (TVM v0.20: its folder name) and
// fixtures/relax-ffi (TVM v0.26: "ffi_" + its folder name), sorted; empty without fixtures.
std::vector<std::string> relax_cases();
// The case's folder under the fixtures ("relax/relax_mlp", "relax-ffi/relax_mlp").
std::string relax_case_folder(const std::string& name);

struct RelaxInputSet {
  std::string suffix;
  std::vector<std::string> inputs;   // paths, in argument order
  std::vector<std::string> outputs;  // paths of output_<i><suffix>.npy, depth-first
};
struct RelaxCase {
  std::string dir;
  std::string entry;
  std::vector<RelaxInputSet> sets;
};
RelaxCase relax_case(const std::string& name);

// A VM module over the case's library, initialised for the CPU (pooled allocator).
graphrt::Module relax_vm(const graphrt::Module& lib);
// The input set's arrays, read from its .npy files.
std::vector<graphrt::NDArray> relax_inputs(const RelaxInputSet& set);
// A tensor or (nested) tuple result as its tensors, depth-first.
std::vector<graphrt::NDArray> flatten_result(const graphrt::RetValue& result);

}  // namespace graphrt_test
