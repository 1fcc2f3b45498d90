// The "cuda" device module: decoding of its blob payload (the "cuda" record TVM writes), the
// pure launch planning and argument packing, and CudaModuleNode, whose
// functions launch kernels through the driver.
#pragma once

#include <dlpack/dlpack.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"
#include "graphrt/tvm_abi.h"
#include "backends/cuda/cuda_driver.h"
#include "src/base/function_table/function_table.h"

namespace graphrt {
namespace cuda_backend {

constexpr int kMaxCudaDevices = 32;
// Dynamic shared memory at or above this needs the per-function opt-in.
constexpr uint32_t kDynSmemOptInBytes = 48 * 1024;
constexpr const char* kDynSmemTag = "tir.use_dyn_shared_memory";

// TVM's FunctionInfo, read by the base's one reader of device function tables.
using CudaFunctionInfo = DeviceFunctionInfo;

// Payload of a "cuda" blob record.
struct CudaModuleImage {
  std::string fmt;   // "ptx", "cubin" (often really a fatbin), anything else accepted
  std::map<std::string, CudaFunctionInfo> fmap;
  std::string data;  // PTX text or cubin/fatbin bytes
};

// Reads fmt, fmap and data from `reader` (exactly the record's bytes).
// Errors carry the reader's origin and offset; a duplicate key is an error.
// The FunctionInfo's own name field is not trusted (TVM v0.18 writes it
// empty): `name` is set to the map key, the kernel's symbol.
// The payload's layout: TVM up to v0.20 (a blob record), or v0.22+ (a library
// module's bytes: each function's info also lists per-argument extra tags).
enum class CudaPayloadFormat { kRecord, kWithArgExtraTags };
CudaModuleImage decode_cuda_payload(BlobReader& reader, CudaPayloadFormat format = CudaPayloadFormat::kRecord);
// The inverse, for tests and tools.
std::string encode_cuda_payload(const CudaModuleImage& image);

// How one kernel argument reaches kernelParams.
enum class ArgKind : uint8_t {
  kValuePointer,  // int64 / float64 / handle: pointer to the caller's TVMValue
  kInt32,         // (int32) v_int64 in a 4-byte temporary
  kUInt32,        // (uint32) v_int64 in a 4-byte temporary
  kFloat32,       // (float) v_float64 in a 4-byte temporary
};

// Everything about a kernel's packed call that does not need a GPU.
struct KernelPlan {
  std::string name;
  std::vector<ArgKind> args;
  // Per argument: a device address (a handle), which a captured graph's
  // update may move when a zero-copy tensor changes.
  std::vector<bool> handle_args;
  std::vector<int> tag_slots;  // per launch tag: 0..2 grid x/y/z, 3..5 block x/y/z
  bool dyn_smem = false;
  // Packed-call arity: kernel args, one extent per tag, then dyn smem bytes.
  int expected_args() const { return static_cast<int>(args.size() + tag_slots.size()) + (dyn_smem ? 1 : 0); }
};

// Validates arg types and launch tags; throws an Error naming the kernel and
// the offending dtype or tag ("kernel 'k': argument 2 has dtype float16, ...").
KernelPlan plan_kernel(const CudaFunctionInfo& info);
// "blockIdx.x" → 0 ... "threadIdx.z" → 5; -1 for anything else.
int launch_tag_slot(const std::string& tag);

struct LaunchDims {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dyn_smem_bytes = 0;
};
// Reads the extents that follow the kernel arguments (values[args.size()...]).
// An extent of 0 leaves its dimension at 1; negative or > 2^32-1 is an Error.
LaunchDims compute_launch_dims(const KernelPlan& plan, const TVMValue* values, int num_values);

// 4-byte temporaries for the narrowed arguments.
union Arg32 {
  int32_t i32;
  uint32_t u32;
  float f32;
};
// Fills params[0..args.size()) with pointers into `values` (which must stay
// alive and unmodified until the launch) or into `temps`.
void pack_kernel_args(const KernelPlan& plan, const TVMValue* values, Arg32* temps, void** params);

class CudaDeviceAPI;

class CudaModuleNode : public ModuleNode {
 public:
  // Holds `api`: the module may outlive the runtime whose loader made it.
  CudaModuleNode(CudaModuleImage image, std::shared_ptr<CudaDeviceAPI> api);
  ~CudaModuleNode() override;

  std::string type_key() const override { return "cuda"; }
  PackedFunc find_function(const std::string& name, const Module& self) override;
  std::vector<std::string> function_names() const override;
  const CudaModuleImage& image() const { return image_; }

  // The kernel on `device_id`, loading the image there on first use (the
  // device's context must be current). Throws an Error with the driver's message.
  CUfunction get_cu_function(int device_id, const std::string& name);
  CUmodule get_cu_module(int device_id);
  CudaDeviceAPI* api() const { return api_.get(); }

 private:
  CudaModuleImage image_;
  std::shared_ptr<CudaDeviceAPI> api_;
  std::mutex mutex_;
  std::array<CUmodule, kMaxCudaDevices> modules_{};
};

// The "loadbinary_cuda" handler body.
Module load_cuda_module(BlobReader& reader, std::shared_ptr<CudaDeviceAPI> api,
                        CudaPayloadFormat format = CudaPayloadFormat::kRecord);

}  // namespace cuda_backend
}  // namespace graphrt
