// Just enough of TVM's C++ object layout to hand an Array<NDArray> to code
// compiled against TVM's headers (C-source BYOC modules' `__init_<symbol>`).
//
// Layout (TVM v0.16-v0.18, LP64): Object = {u32 type_index, i32 ref_counter,
// void (*deleter)(Object*)}; ArrayNode = Object + {i64 size, i64 capacity}
// followed by `capacity` Object* slots. ArrayNode's static type index is 4.
#pragma once

#include <cstdint>
#include <vector>

#include "graphrt/ndarray.h"

namespace graphrt {

// An opaque TVM-layout ArrayNode of NDArrays; the returned pointer carries one
// reference that the caller must drop with tvm_object_release. Elements are
// TVM-layout NDArray containers viewing (and keeping alive) `arrays`.
void* tvm_array_of_ndarrays(const std::vector<NDArray>& arrays);
void tvm_object_release(void* object);

}  // namespace graphrt
