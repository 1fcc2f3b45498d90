#include "backends/opencl/opencl_launch.h"

#include <algorithm>
#include <climits>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"

namespace graphrt {
namespace opencl_backend {

namespace {

Error plan_error(ErrorKind kind, const std::string& function, const std::string& message, const char* field) {
  Error e(kind, "opencl kernel " + quoted(function) + ": " + message);
  e.with("module", "opencl").with("function", quoted(function)).with("field", field);
  return e;
}

// TVM's thread axes, in launch-slot order.
int launch_tag_slot(const std::string& tag) {
  static const char* const kTags[6] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                       "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (int i = 0; i < 6; ++i) {
    if (tag == kTags[i]) return i;
  }
  return -1;
}

bool arg_kind_of(DLDataType t, ArgKind* kind) {
  if (t.lanes != 1) return false;
  if (t.code == kDLOpaqueHandle) {
    *kind = ArgKind::kBuffer;
    return true;
  }
  struct Entry {
    uint8_t code, bits;
    ArgKind kind;
  };
  static const Entry kScalars[] = {
      {kDLInt, 8, ArgKind::kInt8},     {kDLInt, 16, ArgKind::kInt16},    {kDLInt, 32, ArgKind::kInt32},
      {kDLInt, 64, ArgKind::kInt64},   {kDLUInt, 8, ArgKind::kUInt8},    {kDLUInt, 16, ArgKind::kUInt16},
      {kDLUInt, 32, ArgKind::kUInt32}, {kDLUInt, 64, ArgKind::kUInt64},  {kDLFloat, 32, ArgKind::kFloat32},
      {kDLFloat, 64, ArgKind::kFloat64},
  };
  for (const Entry& e : kScalars) {
    if (e.code == t.code && e.bits == t.bits) {
      *kind = e.kind;
      return true;
    }
  }
  return false;
}

std::string dtype_text(DLDataType t) {
  std::string name;
  try {
    name = dtype_to_string(t);
  } catch (const Error&) {
    name = "code " + std::to_string(t.code);
  }
  return name + " {code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
         std::to_string(t.lanes) + "}";
}

}  // namespace

size_t scalar_bytes(ArgKind kind) {
  switch (kind) {
    case ArgKind::kBuffer: return 0;
    case ArgKind::kInt8: case ArgKind::kUInt8: return 1;
    case ArgKind::kInt16: case ArgKind::kUInt16: return 2;
    case ArgKind::kInt32: case ArgKind::kUInt32: case ArgKind::kFloat32: return 4;
    case ArgKind::kInt64: case ArgKind::kUInt64: case ArgKind::kFloat64: return 8;
  }
  return 0;
}

KernelPlan plan_kernel(const OpenclFunctionInfo& info) {
  KernelPlan plan;
  plan.name = info.name;
  for (size_t i = 0; i < info.arg_types.size(); ++i) {
    ArgKind kind;
    if (!arg_kind_of(info.arg_types[i], &kind))
      throw plan_error(ErrorKind::kUnsupported, info.name,
                       "argument " + std::to_string(i) + " has dtype " + dtype_text(info.arg_types[i]) +
                           ", which cannot be passed to a kernel (supported: handle, int8-64, uint8-64, float32, "
                           "float64)",
                       "arg_types");
    plan.args.push_back(kind);
  }
  int highest = 0;
  for (const std::string& tag : info.launch_param_tags) {
    const int slot = launch_tag_slot(tag);
    if (slot < 0)
      throw plan_error(ErrorKind::kUnsupported, info.name,
                       "launch tag " + quoted(tag) +
                           " is not one OpenCL launches with (blockIdx.x/y/z, threadIdx.x/y/z; no dynamic shared memory)",
                       "launch_param_tags");
    for (int seen : plan.tag_slots) {
      if (seen == slot)
        throw plan_error(ErrorKind::kInvalidArgument, info.name, "launch tag " + quoted(tag) + " is given twice",
                         "launch_param_tags");
    }
    plan.tag_slots.push_back(slot);
    highest = std::max(highest, slot % 3);
  }
  plan.work_dim = static_cast<unsigned>(highest + 1);
  return plan;
}

LaunchDims compute_launch_dims(const KernelPlan& plan, const TVMValue* values, int num_values) {
  if (num_values != plan.expected_args())
    throw Error(ErrorKind::kTypeMismatch,
                "opencl kernel " + quoted(plan.name) + " expects " + std::to_string(plan.expected_args()) +
                    " arguments (" + std::to_string(plan.args.size()) + " kernel arguments, " +
                    std::to_string(plan.tag_slots.size()) + " launch extents), got " + std::to_string(num_values))
        .with("module", "opencl")
        .with("function", quoted(plan.name))
        .with("field", "arg_types");
  size_t extents[6] = {1, 1, 1, 1, 1, 1};
  const size_t base = plan.args.size();
  for (size_t i = 0; i < plan.tag_slots.size(); ++i) {
    const int64_t v = values[base + i].v_int64;
    if (v < 0 || v > static_cast<int64_t>(UINT32_MAX))
      throw Error(ErrorKind::kOutOfRange, "opencl kernel " + quoted(plan.name) + ": launch extent " +
                                              std::to_string(v) + " is out of range")
          .with("module", "opencl")
          .with("function", quoted(plan.name))
          .with("field", "launch_param_tags");
    if (v != 0) extents[plan.tag_slots[i]] = static_cast<size_t>(v);
  }
  LaunchDims dims;
  for (int d = 0; d < 3; ++d) {
    dims.local[d] = extents[3 + d];
    dims.global[d] = extents[d] * extents[3 + d];  // both below 2^32: no overflow in 64 bits
  }
  return dims;
}

ScalarBytes scalar_value(ArgKind kind, const TVMValue& value) {
  ScalarBytes s;
  s.u64 = 0;
  switch (kind) {
    case ArgKind::kBuffer: break;
    case ArgKind::kInt8: s.i8 = static_cast<int8_t>(value.v_int64); break;
    case ArgKind::kInt16: s.i16 = static_cast<int16_t>(value.v_int64); break;
    case ArgKind::kInt32: s.i32 = static_cast<int32_t>(value.v_int64); break;
    case ArgKind::kInt64: s.i64 = value.v_int64; break;
    case ArgKind::kUInt8: s.u8 = static_cast<uint8_t>(value.v_int64); break;
    case ArgKind::kUInt16: s.u16 = static_cast<uint16_t>(value.v_int64); break;
    case ArgKind::kUInt32: s.u32 = static_cast<uint32_t>(value.v_int64); break;
    case ArgKind::kUInt64: s.u64 = static_cast<uint64_t>(value.v_int64); break;
    case ArgKind::kFloat32: s.f32 = static_cast<float>(value.v_float64); break;
    case ArgKind::kFloat64: s.f64 = value.v_float64; break;
  }
  return s;
}

}  // namespace opencl_backend
}  // namespace graphrt
