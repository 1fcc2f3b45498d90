// The built-in `tensor` native module (version 1): tensors as VM refs.
//
//   tensor.alloc    0iiCID_r  (dtype code, bits, dims...) -> tensor   host memory, zeroed
//   tensor.rank     0r_i      tensor.dim 0ri_I     tensor.numel 0r_I
//   tensor.dtype    0r_i      code | bits << 8 | lanes << 16
//   tensor.get_i32  0rI_i     tensor.set_i32 0rIi   (flat row-major index)
//   tensor.get_i64  0rI_I     tensor.set_i64 0rII
//   tensor.get_f32  0rI_f     tensor.set_f32 0rIf
//   tensor.get_f64  0rI_F     tensor.set_f64 0rIF
// Element access converts between the accessor type and the tensor dtype
// (int/uint 8-64, float 32/64); other dtypes and non-CPU tensors are errors.
#pragma once

#include <memory>

#include "backends/vm/host/native_module.h"

namespace graphrt {
namespace vm {

std::shared_ptr<NativeModule> create_tensor_module();

}  // namespace vm
}  // namespace graphrt
