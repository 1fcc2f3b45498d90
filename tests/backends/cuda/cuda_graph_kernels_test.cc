// The record of a captured graph's kernels and the move of a zero-copy
// tensor's address through it: pure bookkeeping, no driver.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "backends/cuda/cuda_graph_kernels.h"

using namespace graphrt;
using namespace graphrt::cuda_backend;

namespace {
const DLDataType kHandle{kDLOpaqueHandle, 64, 1}, kI64{kDLInt, 64, 1}, kI32{kDLInt, 32, 1};

CUgraphNode node(uintptr_t id) { return reinterpret_cast<CUgraphNode>(id); }

// Records a kernel of (handle, int64, handle, int32) arguments as captured.
void add(CapturedKernels& kernels, uintptr_t id, uint32_t step, uint64_t a, int64_t scalar, uint64_t b) {
  KernelPlan plan = plan_kernel({"k" + std::to_string(id), {kHandle, kI64, kHandle, kI32}, {}});
  TVMValue values[4];
  values[0].v_handle = reinterpret_cast<void*>(static_cast<uintptr_t>(a));
  values[1].v_int64 = scalar;
  values[2].v_handle = reinterpret_cast<void*>(static_cast<uintptr_t>(b));
  values[3].v_int64 = -5;
  Arg32 temps[4];
  void* params[4];
  pack_kernel_args(plan, values, temps, params);
  kernels.add(node(id), step, nullptr, plan, LaunchDims{}, params);
}
}  // namespace

// Handle arguments inside [old, old + n) move by their offset; one past the
// end, scalars that happen to equal an address, and kernels of other steps
// stay; each changed kernel is updated once, with all its arguments.
TEST(CudaGraphKernels, RebindMovesHandlesInRangeOfTheNamedSteps) {
  const uint64_t old_base = 0x10000, new_base = 0x90000, other = 0x50000;
  CapturedKernels kernels;
  add(kernels, 1, 0, old_base, static_cast<int64_t>(old_base), other);  // a scalar equal to the address
  add(kernels, 2, 1, other, 7, old_base + 0x40);                          // an interior pointer, second handle
  add(kernels, 3, 2, old_base, 0, old_base + 0x100);                      // one past the end
  add(kernels, 4, 3, old_base, 0, other);                                 // a step not named: another tensor
  std::vector<uintptr_t> updated;
  std::vector<std::vector<uint64_t>> values;
  const uint32_t steps[] = {0, 1, 2};
  size_t changed = kernels.rebind(old_base, 0x100, new_base, steps, 3, [&](CapturedKernel& k) {
    updated.push_back(reinterpret_cast<uintptr_t>(k.node));
    values.push_back(k.values);
    std::vector<void*> params;
    CudaKernelNodeParams p = k.node_params(&params);
    ASSERT_EQ(params.size(), 4u);
    EXPECT_EQ(p.kernel_params, params.data());
    EXPECT_EQ(*static_cast<int32_t*>(params[3]), -5);  // a 4-byte argument in its slot's low half
  });
  EXPECT_EQ(changed, 3u);
  ASSERT_EQ(updated, (std::vector<uintptr_t>{1, 2, 3}));
  EXPECT_EQ(values[0], (std::vector<uint64_t>{new_base, old_base, other, uint32_t(-5)}));
  EXPECT_EQ(values[1], (std::vector<uint64_t>{other, 7, new_base + 0x40, uint32_t(-5)}));
  EXPECT_EQ(values[2], (std::vector<uint64_t>{new_base, 0, old_base + 0x100, uint32_t(-5)}));
  // The record holds the new addresses: moving again starts from them.
  updated.clear();
  const uint32_t first[] = {0};
  kernels.rebind(new_base, 0x100, old_base, first, 1, [&](CapturedKernel& k) {
    updated.push_back(reinterpret_cast<uintptr_t>(k.node));
    EXPECT_EQ(k.values[0], old_base);
  });
  EXPECT_EQ(updated, (std::vector<uintptr_t>{1}));
}

// Work an update cannot follow, or a graph with nodes nobody recorded,
// makes the record refuse; the first reason is kept.
TEST(CudaGraphKernels, RefusesWhatItCannotFollow) {
  CapturedKernels kernels;
  add(kernels, 1, 0, 0x1000, 0, 0x2000);
  kernels.add_other("a memset of the module's global barrier", false);
  kernels.check_node_count(2);
  EXPECT_EQ(kernels.refusal(), "");
  kernels.check_node_count(3);
  EXPECT_EQ(kernels.refusal(), "the graph has 3 nodes, 2 of them recorded by graphrt");
  CapturedKernels with_copy;
  with_copy.add_other("a device-to-device copy", true);
  with_copy.refuse("later reason");
  EXPECT_EQ(with_copy.refusal(), "it holds a device-to-device copy, whose addresses are not followed");
}
