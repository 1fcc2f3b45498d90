#include "backends/cuda/cuda_module.h"

#include <atomic>
#include <climits>
#include <memory>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "backends/cuda/cuda_device_api.h"

namespace graphrt {
namespace cuda_backend {

// --- Payload decoding.

namespace {

// TVM v0.22+ adds one i32 tag per argument: 0 for a plain argument, 1 for a
// CUtensorMap passed by value, which graphrt's launcher does not build.
void check_arg_extra_tags(const CudaFunctionInfo& info) {
  for (size_t i = 0; i < info.arg_extra_tags.size(); ++i) {
    const int32_t tag = info.arg_extra_tags[i];
    if (tag != 0)
      throw Error(ErrorKind::kUnsupported, "cuda kernel argument " + std::to_string(i) + " has extra tag " +
                                               std::to_string(tag) + " (a TMA tensor map), which graphrt cannot pass")
          .with("kernel", info.name);
  }
}

}  // namespace

CudaModuleImage decode_cuda_payload(BlobReader& reader, CudaPayloadFormat format) {
  CudaModuleImage image;
  image.fmt = reader.read_string("cuda module format");
  image.fmap = read_function_table(reader, "cuda",
                                   format == CudaPayloadFormat::kWithArgExtraTags ? FunctionTableLayout::kWithArgExtraTags
                                                                                  : FunctionTableLayout::kRecord);
  for (const auto& entry : image.fmap) check_arg_extra_tags(entry.second);
  image.data = reader.read_string("cuda module image");
  if (image.data.empty()) throw reader.error("cuda module image is empty");
  return image;
}

std::string encode_cuda_payload(const CudaModuleImage& image) {
  BlobWriter w;
  w.write_string(image.fmt);
  write_function_table(w, image.fmap, FunctionTableLayout::kRecord);
  w.write_string(image.data);
  return w.take();
}

// --- Launch planning (no GPU needed).

int launch_tag_slot(const std::string& tag) {
  static const char* kTags[6] = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (int i = 0; i < 6; ++i) {
    if (tag == kTags[i]) return i;
  }
  return -1;
}

KernelPlan plan_kernel(const CudaFunctionInfo& info) {
  KernelPlan plan;
  plan.name = info.name;
  for (size_t i = 0; i < info.arg_types.size(); ++i) {
    DLDataType t = info.arg_types[i];
    ArgKind kind;
    if (t.code == kDLOpaqueHandle && t.lanes == 1) {
      kind = ArgKind::kValuePointer;
    } else if (t.lanes == 1 && t.code == kDLInt && t.bits == 64) {
      kind = ArgKind::kValuePointer;
    } else if (t.lanes == 1 && t.code == kDLFloat && t.bits == 64) {
      kind = ArgKind::kValuePointer;
    } else if (t.lanes == 1 && t.code == kDLInt && t.bits == 32) {
      kind = ArgKind::kInt32;
    } else if (t.lanes == 1 && t.code == kDLUInt && t.bits == 32) {
      kind = ArgKind::kUInt32;
    } else if (t.lanes == 1 && t.code == kDLFloat && t.bits == 32) {
      kind = ArgKind::kFloat32;
    } else {
      std::string dtype;
      try {
        dtype = dtype_to_string(t);
      } catch (const Error&) {
        dtype = "code " + std::to_string(t.code);
      }
      dtype += " {code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
               std::to_string(t.lanes) + "}";
      throw Error(ErrorKind::kUnsupported,
                  "cuda kernel '" + info.name + "': argument " + std::to_string(i) + " has dtype " + dtype +
                  ", which cannot be passed to a kernel (supported: handle, int32, uint32, int64, float32, float64)")
          .with("kernel", info.name);
    }
    plan.args.push_back(kind);
    plan.handle_args.push_back(t.code == kDLOpaqueHandle);
  }
  const auto& tags = info.launch_param_tags;
  for (size_t i = 0; i < tags.size(); ++i) {
    if (tags[i] == kDynSmemTag) {
      if (i + 1 != tags.size())
        throw Error("cuda kernel '" + info.name + "': launch tag '" + tags[i] + "' must be the last tag")
            .with("kernel", info.name);
      plan.dyn_smem = true;
      continue;
    }
    int slot = launch_tag_slot(tags[i]);
    if (slot < 0)
      throw Error("cuda kernel '" + info.name + "': unknown launch tag '" + tags[i] +
                  "' (expected blockIdx.x/y/z, threadIdx.x/y/z or " + kDynSmemTag + ")")
          .with("kernel", info.name);
    plan.tag_slots.push_back(slot);
  }
  return plan;
}

LaunchDims compute_launch_dims(const KernelPlan& plan, const TVMValue* values, int num_values) {
  if (num_values != plan.expected_args())
    throw Error(ErrorKind::kTypeMismatch,
                "cuda kernel '" + plan.name + "' expects " + std::to_string(plan.expected_args()) + " arguments (" +
                std::to_string(plan.args.size()) + " kernel args, " + std::to_string(plan.tag_slots.size()) +
                " launch extents" + (plan.dyn_smem ? ", dynamic shared memory bytes" : "") + "), got " +
                std::to_string(num_values))
        .with("kernel", plan.name);
  LaunchDims dims;
  uint32_t* slots[6] = {&dims.grid[0], &dims.grid[1], &dims.grid[2], &dims.block[0], &dims.block[1], &dims.block[2]};
  size_t base = plan.args.size();
  auto extent = [&](size_t index, const char* what) -> uint32_t {
    int64_t v = values[index].v_int64;
    if (v < 0 || v > static_cast<int64_t>(UINT32_MAX))
      throw Error(ErrorKind::kOutOfRange,
                  "cuda kernel '" + plan.name + "': " + what + " " + std::to_string(v) + " is out of range")
          .with("kernel", plan.name);
    return static_cast<uint32_t>(v);
  };
  for (size_t i = 0; i < plan.tag_slots.size(); ++i) {
    uint32_t v = extent(base + i, "launch extent");
    if (v != 0) *slots[plan.tag_slots[i]] = v;
  }
  if (plan.dyn_smem) dims.dyn_smem_bytes = extent(base + plan.tag_slots.size(), "dynamic shared memory size");
  return dims;
}

void pack_kernel_args(const KernelPlan& plan, const TVMValue* values, Arg32* temps, void** params) {
  for (size_t i = 0; i < plan.args.size(); ++i) {
    switch (plan.args[i]) {
      case ArgKind::kValuePointer:
        params[i] = const_cast<TVMValue*>(&values[i]);
        break;
      case ArgKind::kInt32:
        temps[i].i32 = static_cast<int32_t>(values[i].v_int64);
        params[i] = &temps[i];
        break;
      case ArgKind::kUInt32:
        temps[i].u32 = static_cast<uint32_t>(values[i].v_int64);
        params[i] = &temps[i];
        break;
      case ArgKind::kFloat32:
        temps[i].f32 = static_cast<float>(values[i].v_float64);
        params[i] = &temps[i];
        break;
    }
  }
}

// --- The module.

CudaModuleNode::CudaModuleNode(CudaModuleImage image, std::shared_ptr<CudaDeviceAPI> api)
    : image_(std::move(image)), api_(std::move(api)) {}

// A module is unloaded from the current context, so each one is unloaded with
// its device's context current (the last holder may be any thread), and the
// thread's own context is put back afterwards.
CudaModuleNode::~CudaModuleNode() {
  bool any = false;
  for (CUmodule m : modules_) any = any || m;
  if (!any) return;
  const CudaDriver& d = api_->driver();
  if (!d.ok()) return;
  CUcontext previous = nullptr;
  bool have_previous = d.cuCtxGetCurrent(&previous) == CUDA_SUCCESS;
  for (int id = 0; id < kMaxCudaDevices; ++id) {
    if (!modules_[id]) continue;
    try {
      api_->activate(id);
    } catch (const Error&) {
      continue;  // the context is gone (driver torn down at exit): so is the module
    }
    d.cuModuleUnload(modules_[id]);  // errors at exit (deinitialized driver) are ignored
  }
  if (have_previous) d.cuCtxSetCurrent(previous);
}

std::vector<std::string> CudaModuleNode::function_names() const {
  std::vector<std::string> names;
  for (const auto& entry : image_.fmap) names.push_back(entry.first);
  return names;
}

CUmodule CudaModuleNode::get_cu_module(int device_id) {
  if (device_id < 0 || device_id >= kMaxCudaDevices) throw Error(ErrorKind::kOutOfRange,
                                                                 "bad CUDA device id " + std::to_string(device_id));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!modules_[device_id]) {
    const CudaDriver& d = api_->driver();
    std::string image = image_.data;
    if (image_.fmt == "ptx" || (!image.empty() && image[0] == '/')) image.push_back('\0');  // PTX is NUL-terminated text
    CUmodule m = nullptr;
    CUresult r = d.cuModuleLoadData(&m, image.data());
    if (r != CUDA_SUCCESS)
      throw Error(ErrorKind::kDevice,
                  "cuModuleLoadData (" + image_.fmt + ", " + std::to_string(image_.data.size()) + " bytes) on cuda:" +
                  std::to_string(device_id) + " failed: " + d.describe(r))
          .with("module", "cuda");
    modules_[device_id] = m;
  }
  return modules_[device_id];
}

CUfunction CudaModuleNode::get_cu_function(int device_id, const std::string& name) {
  CUmodule m = get_cu_module(device_id);
  CUfunction f = nullptr;
  const CudaDriver& d = api_->driver();
  CUresult r = d.cuModuleGetFunction(&f, m, name.c_str());
  if (r != CUDA_SUCCESS)
    throw Error(ErrorKind::kDevice,
                "cuModuleGetFunction('" + name + "') on cuda:" + std::to_string(device_id) + " failed: " + d.describe(r))
        .with("kernel", name);
  return f;
}

namespace {

// One kernel's packed function state; CUfunctions are resolved per device on first call.
struct KernelState {
  KernelPlan plan;
  Module owner;  // keeps the CudaModuleNode (and its CUmodules) alive
  CudaModuleNode* node = nullptr;
  std::array<std::atomic<CUfunction>, kMaxCudaDevices> funcs{};
  std::array<std::atomic<uint32_t>, kMaxCudaDevices> smem_opt_in{};  // largest dyn smem already allowed
};

void launch(KernelState& k, const TVMArgs& args) {
  const KernelPlan& plan = k.plan;
  LaunchDims dims = compute_launch_dims(plan, args.values(), args.size());
  CudaDeviceAPI* api = k.node->api();
  int dev = api->current_device();
  api->activate(dev);
  CUfunction f = k.funcs[dev].load(std::memory_order_acquire);
  if (!f) {
    f = k.node->get_cu_function(dev, plan.name);
    k.funcs[dev].store(f, std::memory_order_release);
  }
  const CudaDriver& d = api->driver();
  if (dims.dyn_smem_bytes >= kDynSmemOptInBytes && dims.dyn_smem_bytes > k.smem_opt_in[dev].load()) {
    api->check(d.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(dims.dyn_smem_bytes)),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES=" + std::to_string(dims.dyn_smem_bytes) + ") for '" +
                   plan.name + "'");
    k.smem_opt_in[dev].store(dims.dyn_smem_bytes);
  }
  constexpr size_t kInline = 32;
  size_t n = plan.args.size();
  Arg32 temps_inline[kInline];
  void* params_inline[kInline];
  std::vector<Arg32> temps_heap;
  std::vector<void*> params_heap;
  Arg32* temps = temps_inline;
  void** params = params_inline;
  if (n > kInline) {
    temps_heap.resize(n);
    params_heap.resize(n);
    temps = temps_heap.data();
    params = params_heap.data();
  }
  pack_kernel_args(plan, args.values(), temps, params);
  CUresult r = d.cuLaunchKernel(f, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1], dims.block[2],
                                dims.dyn_smem_bytes, api->current_stream(dev), params, nullptr);
  if (r == CUDA_SUCCESS) {
    api->note_captured_launch(dev, f, plan, dims, params);
    return;
  }
  if (r != CUDA_ERROR_DEINITIALIZED) {
    auto dim3 = [](const uint32_t* v) {
      return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
    };
    throw Error(ErrorKind::kDevice,
                "cuLaunchKernel '" + plan.name + "' grid " + dim3(dims.grid) + " block " + dim3(dims.block) +
                " dyn smem " + std::to_string(dims.dyn_smem_bytes) + " on cuda:" + std::to_string(dev) + " failed: " +
                d.describe(r))
        .with("kernel", plan.name);
  }
}

}  // namespace

PackedFunc CudaModuleNode::find_function(const std::string& name, const Module& self) {
  if (name == "__tvm_prepare_global_barrier") {
    Module owner = self;
    return make_function([owner, this](const TVMArgs&, RetValue*) {
      int dev = api_->current_device();
      api_->activate(dev);
      CUmodule m = get_cu_module(dev);
      CUdeviceptr ptr = 0;
      size_t size = 0;
      const CudaDriver& d = api_->driver();
      CUresult r = d.cuModuleGetGlobal(&ptr, &size, m, "__tvm_global_barrier_state");
      if (r == CUDA_ERROR_NOT_FOUND) return;  // no global barrier in this image
      api_->check(r, "cuModuleGetGlobal('__tvm_global_barrier_state')");
      api_->check(d.cuMemsetD32Async(ptr, 0, size / 4 ? size / 4 : 1, api_->current_stream(dev)),
                  "zeroing __tvm_global_barrier_state");
      api_->note_captured_work(dev, "a memset of the module's global barrier", false);
    }, name);
  }
  auto it = image_.fmap.find(name);
  if (it == image_.fmap.end()) return PackedFunc();
  auto state = std::make_shared<KernelState>();
  state->plan = plan_kernel(it->second);  // throws for unsupported arg types
  state->owner = self;
  state->node = this;
  for (auto& f : state->funcs) f.store(nullptr);
  for (auto& s : state->smem_opt_in) s.store(0);
  return make_function([state](const TVMArgs& args, RetValue*) { launch(*state, args); }, name);
}

Module load_cuda_module(BlobReader& reader, std::shared_ptr<CudaDeviceAPI> api, CudaPayloadFormat format) {
  return Module(new CudaModuleNode(decode_cuda_payload(reader, format), std::move(api)));
}

}  // namespace cuda_backend
}  // namespace graphrt
