// Sorting a tensor along one axis as TVM's runtime sorts for generated kernels:
// a stable sort by value (equal values keep their index order), ascending or
// descending, every line along the axis on its own. sort writes the values,
// argsort their indices, topk the first k of either or both.
#pragma once

#include <cstdint>

#include "graphrt/tvm_abi.h"

namespace graphrt {
namespace contrib_sort {

struct AxisSort {
  const DLTensor* input = nullptr;
  int axis = -1;           // negative: from the end
  bool ascending = true;
};

// values: same dtype and shape as the input.
void sort_values(const AxisSort& s, const DLTensor* values);
// indices: the input's shape; int32, int64, float32 or float64.
void sort_indices(const AxisSort& s, const DLTensor* indices);
// Object detection's argsort: in each line only the first counts[line]
// elements are sorted (counts: int32, the input's shape without the axis);
// the positions past them hold their own index. float32 input, int32 indices.
void sort_indices_of_prefix(const AxisSort& s, const DLTensor* counts, const DLTensor* indices);
// The first k (k < 1: all) along the axis; either output may be null. Each
// output has the input's shape with the axis k long.
void top_k(const AxisSort& s, int64_t k, const DLTensor* values, const DLTensor* indices);

}  // namespace contrib_sort
}  // namespace graphrt
