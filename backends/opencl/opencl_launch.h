// How a kernel of the opencl module is called: its arguments' kinds and the
// launch extents that follow them, planned from the function table alone (no
// driver needed), as TVM's host code calls it: the kernel's arguments, then
// one int64 per launch tag.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/tvm_abi.h"
#include "backends/opencl/opencl_record.h"

namespace graphrt {
namespace opencl_backend {

// How one argument reaches clSetKernelArg.
enum class ArgKind : uint8_t {
  kBuffer,   // a device address of this back end: its cl_mem
  kInt8, kInt16, kInt32, kInt64,
  kUInt8, kUInt16, kUInt32, kUInt64,
  kFloat32, kFloat64,
};
// Bytes the kernel's parameter takes (0 for a buffer: a cl_mem).
size_t scalar_bytes(ArgKind kind);

struct KernelPlan {
  std::string name;
  std::vector<ArgKind> args;
  std::vector<int> tag_slots;  // per launch tag: 0..2 grid x/y/z, 3..5 block x/y/z
  unsigned work_dim = 1;       // highest dimension a tag names, plus one
  // Packed-call arity: the kernel's arguments, then one extent per tag.
  int expected_args() const { return static_cast<int>(args.size() + tag_slots.size()); }
};

// Checks argument types and launch tags; throws an Error naming the module,
// the function and the field (arg_types, launch_param_tags).
KernelPlan plan_kernel(const OpenclFunctionInfo& info);

struct LaunchDims {
  size_t global[3] = {1, 1, 1};  // grid x block, as clEnqueueNDRangeKernel takes it
  size_t local[3] = {1, 1, 1};
};
// Reads the extents after the kernel's arguments. An extent of 0 leaves its
// dimension at 1; a negative or too large one, or a count of values that
// is not the plan's, is an Error naming the kernel.
LaunchDims compute_launch_dims(const KernelPlan& plan, const TVMValue* values, int num_values);

// A scalar argument's bytes, narrowed from the call's int64 / float64.
union ScalarBytes {
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  float f32;
  double f64;
};
ScalarBytes scalar_value(ArgKind kind, const TVMValue& value);

}  // namespace opencl_backend
}  // namespace graphrt
