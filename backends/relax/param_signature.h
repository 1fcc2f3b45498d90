// What a VM function's code says about its parameters: the dtype, rank and
// dimensions its prologue checks them against (check_tensor_info and
// match_shape on a parameter register). Tools use it to describe a function
// and to make inputs for it; nothing at run time depends on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/relax/executable.h"

namespace graphrt {
namespace relax {

struct ParamSignature {
  static constexpr int64_t kAnyDim = -1;  // a dimension nothing fixes
  bool tensor = false;     // checked as a tensor (or matched against a shape)
  int64_t ndim = -1;       // -1: any rank
  DLDataType dtype{0, 0, 0};  // bits 0: any dtype
  // One per dimension when the rank is known: the fixed size, or kAnyDim.
  std::vector<int64_t> dims;
  // One per dimension: the shape-heap slot a symbolic dimension is stored
  // in or compared with (dimensions sharing a slot are equal), else -1.
  std::vector<int64_t> symbols;
};

// The signature of every parameter of VM function `function` (an index into
// exe.functions of a verified executable).
std::vector<ParamSignature> param_signatures(const Executable& exe, int64_t function);

// "float32[n0, 784]" (symbolic dimensions as n<slot>, unknown ones as ?),
// "float32[...]" for a tensor of any rank, "?" when nothing is checked.
std::string signature_text(const ParamSignature& s);

// The signature as the VM module's get_function_param_spec hands it out (an
// int64 array; graphrt/relax_vm.h's RelaxParamSpec is its one reader):
//   [tensor (0/1), dtype code, dtype bits, dtype lanes, ndim (-1: any rank),
//    dims[ndim] (-1: not fixed), symbols[ndim] (shape-heap slot, else -1)]
std::vector<int64_t> signature_record(const ParamSignature& s);

}  // namespace relax
}  // namespace graphrt
