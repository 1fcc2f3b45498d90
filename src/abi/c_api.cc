// The C API (include/graphrt/c_api.h): modules, functions, arrays, devices.
#include "layer_api/user_mistakes.h"
#include "graphrt/c_api.h"
#include "graphrt/log.h"

#include <cstring>

#include "abi/c_api_support.h"
#include "graphrt/runtime.h"
#include "abi/object_types.h"
#include "threading/thread_pool.h"

using namespace graphrt;

namespace {
ModuleNode* as_module(TVMModuleHandle h) {
  if (!h) throw Error(ErrorKind::kTypeMismatch, "null module handle");
  return static_cast<ModuleNode*>(h);
}
DLTensor* as_array(TVMArrayHandle h) {
  if (!h) throw Error(ErrorKind::kTypeMismatch, "null array handle");
  return h;
}
// A shape handed to the C API as (pointer, ndim); `function` names the call in the error.
void check_shape(const int64_t* shape, int ndim, const char* function) {
  if (ndim < 0 || (ndim > 0 && !shape)) throw Error(std::string(function) + ": bad shape");
}
std::vector<int64_t> shape_of(const int64_t* shape, int ndim, const char* function) {
  check_shape(shape, ndim, function);
  return std::vector<int64_t>(shape, shape + ndim);
}
DLDataType dtype_of(int code, int bits, int lanes) {
  return DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
}
}  // namespace

extern "C" GRAPHRT_API int TVMModLoadFromFile(const char* file, const char* format, TVMModuleHandle* out) {
  return c_api_guard([&] {
    std::string fmt = format ? format : "";
    std::string path = file ? file : "";
    if (fmt.empty()) {
      size_t dot = path.rfind('.');
      fmt = dot == std::string::npos ? "" : path.substr(dot + 1);
    }
    if (fmt != "so" && fmt != "dll" && fmt != "dylib" && fmt != "dso" && fmt != "tar" && fmt != "o")
      throw Error(ErrorKind::kUnsupported,
                  "cannot load format '" + fmt + "' (graphrt loads shared libraries .so and TVM .tar exports)")
          .with("file", path);
    *out = load_module(path).release();
  });
}

extern "C" GRAPHRT_API int graphrt_module_load_with_flags(const char* path, const char* loader, int flags,
                                                    TVMModuleHandle* out) {
  return graphrt_api_guard([&] {
    if (!path) throw Error("null path");
    if (flags & ~GRAPHRT_LOAD_TRUST_EXPORTS) throw Error(ErrorKind::kUnsupported,
                                                         "unknown load flags " + std::to_string(flags));
    LoadOptions options;
    if (loader && *loader) options.loader = loader;
    options.trust_exports = (flags & GRAPHRT_LOAD_TRUST_EXPORTS) != 0;
    *out = load_module(path, options).release();
  });
}

extern "C" GRAPHRT_API int graphrt_module_load(const char* path, const char* loader, TVMModuleHandle* out) {
  return graphrt_module_load_with_flags(path, loader, 0, out);
}

extern "C" GRAPHRT_API int graphrt_module_load_from_memory(const void* data, size_t size, const char* loader,
                                                     TVMModuleHandle* out) {
  return graphrt_api_guard([&] {
    LoadOptions options;
    options.loader = loader && *loader ? loader : "elf";
    *out = load_module_from_memory(static_cast<const uint8_t*>(data), size, options).release();
  });
}

extern "C" GRAPHRT_API int TVMModImport(TVMModuleHandle mod, TVMModuleHandle dep) {
  return c_api_guard([&] { as_module(mod)->add_import(Module(as_module(dep))); });
}

extern "C" GRAPHRT_API int TVMModGetFunction(TVMModuleHandle mod, const char* name, int query_imports,
                                       TVMFunctionHandle* out) {
  return c_api_guard([&] {
    if (!name) throw Error("null function name");
    *out = as_module(mod)->get_function(name, query_imports != 0).release();
  });
}

extern "C" GRAPHRT_API int TVMModFree(TVMModuleHandle mod) {
  return c_api_guard([&] {
    if (mod) static_cast<ModuleNode*>(mod)->dec_ref();
  });
}

extern "C" GRAPHRT_API int graphrt_module_type_key(TVMModuleHandle mod, const char** out) {
  return graphrt_api_guard([&] { *out = thread_local_string(as_module(mod)->type_key()); });
}

extern "C" GRAPHRT_API int graphrt_module_num_imports(TVMModuleHandle mod, int* out) {
  return graphrt_api_guard([&] { *out = static_cast<int>(as_module(mod)->imports().size()); });
}

extern "C" GRAPHRT_API int graphrt_module_get_import(TVMModuleHandle mod, int index, TVMModuleHandle* out) {
  return graphrt_api_guard([&] {
    const auto& imports = as_module(mod)->imports();
    if (index < 0 || static_cast<size_t>(index) >= imports.size())
      throw Error(ErrorKind::kOutOfRange, "import index " + std::to_string(index) + " out of range (module has " +
                  std::to_string(imports.size()) + " imports)");
    *out = Module(imports[index]).release();
  });
}

extern "C" GRAPHRT_API int graphrt_module_function_names(TVMModuleHandle mod, const char** out) {
  return graphrt_api_guard([&] {
    std::string joined;
    for (const std::string& n : as_module(mod)->function_names()) joined += n + "\n";
    *out = thread_local_string(joined);
  });
}

extern "C" GRAPHRT_API int graphrt_module_usage_hint(TVMModuleHandle mod, const char** out) {
  return graphrt_api_guard([&] { *out = thread_local_string(module_usage_hint(as_module(mod)->type_key())); });
}

extern "C" GRAPHRT_API int graphrt_module_describe(TVMModuleHandle mod, const char** out) {
  return graphrt_api_guard([&] { *out = thread_local_string(describe_module_tree(Module(as_module(mod)))); });
}

extern "C" GRAPHRT_API int graphrt_load_plugin(const char* path) {
  return graphrt_api_guard([&] { load_plugin(path ? path : ""); });
}

extern "C" GRAPHRT_API int TVMFuncFree(TVMFunctionHandle func) {
  return c_api_guard([&] {
    if (func) static_cast<FunctionNode*>(func)->dec_ref();
  });
}

namespace {
// Return slot handed to TVMPackedCFunc callbacks.
struct CallbackReturn {
  RetValue* ret;
};
}  // namespace

extern "C" GRAPHRT_API int TVMFuncCreateFromCFunc(TVMPackedCFunc func, void* resource_handle, TVMPackedCFuncFinalizer fin,
                                            TVMFunctionHandle* out) {
  return c_api_guard([&] {
    std::shared_ptr<void> resource(resource_handle, [fin](void* p) {
      if (fin) fin(p);
    });
    PackedFunc f = make_function([func, resource](const TVMArgs& args, RetValue* ret) {
      CallbackReturn slot{ret};
      int rc = func(const_cast<TVMValue*>(args.values()), const_cast<int*>(args.codes()), args.size(), &slot,
                    resource.get());
      if (rc != 0) throw last_error_as_exception();
    });
    *out = f.release();
  });
}

extern "C" GRAPHRT_API int TVMCFuncSetReturn(TVMRetValueHandle ret, TVMValue* value, int* type_code, int num_ret) {
  return c_api_guard([&] {
    if (num_ret != 1) throw Error("TVMCFuncSetReturn: num_ret must be 1");
    static_cast<CallbackReturn*>(ret)->ret->set_arg(TVMArgs(value, type_code, 1), 0);
  });
}

extern "C" GRAPHRT_API int TVMFuncRegisterGlobal(const char* name, TVMFunctionHandle f, int override) {
  return c_api_guard([&] {
    if (!name || !f) throw Error("TVMFuncRegisterGlobal: null name or function");
    registry_set(name, PackedFunc(static_cast<FunctionNode*>(f)), override != 0);
  });
}

extern "C" GRAPHRT_API int TVMFuncGetGlobal(const char* name, TVMFunctionHandle* out) {
  return c_api_guard([&] {
    *out = registry_get(name ? name : "").release();
  });
}

extern "C" GRAPHRT_API int TVMFuncListGlobalNames(int* out_size, const char*** out_array) {
  return c_api_guard([&] {
    thread_local std::vector<std::string> names;
    thread_local std::vector<const char*> pointers;
    names = registry_names();
    pointers.clear();
    for (const std::string& n : names) pointers.push_back(n.c_str());
    *out_size = static_cast<int>(pointers.size());
    *out_array = pointers.data();
  });
}

extern "C" GRAPHRT_API int TVMFuncRemoveGlobal(const char* name) {
  return c_api_guard([&] { registry_remove(name ? name : ""); });
}

extern "C" GRAPHRT_API int TVMObjectFree(TVMObjectHandle obj) {
  return c_api_guard([&] {
    if (obj) static_cast<Object*>(obj)->dec_ref();
  });
}

extern "C" GRAPHRT_API int TVMObjectRetain(TVMObjectHandle obj) {
  return c_api_guard([&] {
    if (obj) static_cast<Object*>(obj)->inc_ref();
  });
}

extern "C" GRAPHRT_API int TVMArrayAlloc(const tvm_index_t* shape, int ndim, int dtype_code, int dtype_bits,
                                   int dtype_lanes, int device_type, int device_id, TVMArrayHandle* out) {
  return c_api_guard([&] {
    DLDevice dev{static_cast<DLDeviceType>(device_type), device_id};
    *out = NDArray::empty(shape_of(shape, ndim, "TVMArrayAlloc"), dtype_of(dtype_code, dtype_bits, dtype_lanes), dev)
               .release();
  });
}

extern "C" GRAPHRT_API int TVMArrayFree(TVMArrayHandle handle) {
  return c_api_guard([&] {
    if (handle) NDArray::adopt_handle(handle);
  });
}

extern "C" GRAPHRT_API int TVMArrayCopyFromBytes(TVMArrayHandle handle, void* data, size_t nbytes) {
  return c_api_guard([&] { NDArray::borrow_handle(as_array(handle)).copy_from_bytes(data, nbytes); });
}

extern "C" GRAPHRT_API int TVMArrayCopyToBytes(TVMArrayHandle handle, void* data, size_t nbytes) {
  return c_api_guard([&] { NDArray::borrow_handle(as_array(handle)).copy_to_bytes(data, nbytes); });
}

extern "C" GRAPHRT_API int TVMArrayCopyFromTo(TVMArrayHandle from, TVMArrayHandle to, TVMStreamHandle stream) {
  return c_api_guard([&] { copy_tensor(as_array(from), as_array(to), stream); });
}

extern "C" GRAPHRT_API int TVMArrayFromDLPack(DLManagedTensor* from, TVMArrayHandle* out) {
  return c_api_guard([&] { *out = NDArray::from_dlpack(from).release(); });
}

extern "C" GRAPHRT_API int TVMArrayToDLPack(TVMArrayHandle from, DLManagedTensor** out) {
  return c_api_guard([&] { *out = NDArray::borrow_handle(as_array(from)).to_dlpack(); });
}

extern "C" GRAPHRT_API void TVMDLManagedTensorCallDeleter(DLManagedTensor* dltensor) {
  if (dltensor && dltensor->deleter) dltensor->deleter(dltensor);
}

extern "C" GRAPHRT_API int graphrt_array_view_at(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code,
                                           int dtype_bits, int dtype_lanes, uint64_t byte_offset, TVMArrayHandle* out) {
  return graphrt_api_guard([&] {
    *out = NDArray::borrow_handle(as_array(handle))
               .view(shape_of(shape, ndim, "graphrt_array_view"), dtype_of(dtype_code, dtype_bits, dtype_lanes),
                     byte_offset)
               .release();
  });
}

extern "C" GRAPHRT_API int graphrt_array_view(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code,
                                        int dtype_bits, int dtype_lanes, TVMArrayHandle* out) {
  return graphrt_array_view_at(handle, shape, ndim, dtype_code, dtype_bits, dtype_lanes, 0, out);
}

extern "C" GRAPHRT_API int TVMDeviceAllocDataSpace(DLDevice dev, size_t nbytes, size_t alignment, DLDataType,
                                             void** out_data) {
  return c_api_guard([&] { *out_data = device_api(dev)->alloc(dev, nbytes, alignment); });
}

extern "C" GRAPHRT_API int TVMDeviceFreeDataSpace(DLDevice dev, void* ptr) {
  return c_api_guard([&] { device_api(dev)->free(dev, ptr); });
}

extern "C" GRAPHRT_API int TVMDeviceCopyDataFromTo(DLTensor* from, DLTensor* to, TVMStreamHandle stream) {
  return c_api_guard([&] { copy_tensor(from, to, stream); });
}

namespace {
// An unavailable device is this call's answer, not its failure: the reason
// comes back as text ("" when the device can be used).
std::string device_unavailable_reason(int device_type, int device_id) {
  // A device type number nothing registered is not a DLDeviceType value: ask by number first.
  DeviceAPI* api = device_api_or_null(device_type);
  if (!api) return "no device API for device type " + std::to_string(device_type) + " in this build";
  try {
    api->check_available(DLDevice{static_cast<DLDeviceType>(device_type), device_id});
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}
}  // namespace

// Checked on the int: a device type from C that graphrt has no API for must
// not become an out-of-range DLDeviceType.
static DLDevice make_device(int type, int id) {
  if (!device_api_or_null(type == kDLCUDAHost ? kDLCPU : type))
    throw Error(ErrorKind::kUnsupported, "no device API for device type " + std::to_string(type) + " in this build");
  return DLDevice{static_cast<DLDeviceType>(type), id};
}

extern "C" GRAPHRT_API int TVMStreamCreate(int device_type, int device_id, TVMStreamHandle* out) {
  return c_api_guard([&] {
    DLDevice dev = make_device(device_type, device_id);
    *out = device_api(dev)->create_stream(dev);
  });
}

extern "C" GRAPHRT_API int TVMStreamFree(int device_type, int device_id, TVMStreamHandle stream) {
  return c_api_guard([&] {
    DLDevice dev = make_device(device_type, device_id);
    device_api(dev)->free_stream(dev, stream);
  });
}

extern "C" GRAPHRT_API int TVMSetStream(int device_type, int device_id, TVMStreamHandle handle) {
  return c_api_guard([&] {
    DLDevice dev = make_device(device_type, device_id);
    device_api(dev)->set_stream(dev, handle);
  });
}

extern "C" GRAPHRT_API int TVMSynchronize(int device_type, int device_id, TVMStreamHandle stream) {
  return c_api_guard([&] {
    DLDevice dev = make_device(device_type, device_id);
    device_api(dev)->synchronize(dev, stream);
  });
}

extern "C" GRAPHRT_API int graphrt_device_available(int device_type, int device_id, int* available, const char** reason) {
  return graphrt_api_guard([&] {
    std::string why = device_unavailable_reason(device_type, device_id);
    *available = why.empty() ? 1 : 0;
    if (reason) *reason = thread_local_string(why);
  });
}

extern "C" GRAPHRT_API int graphrt_set_num_threads(int n) {
  return graphrt_api_guard([&] { set_num_threads(n); });
}

extern "C" GRAPHRT_API int graphrt_get_num_threads(int* out) {
  return graphrt_api_guard([&] { *out = num_threads(); });
}

extern "C" GRAPHRT_API int graphrt_init(void) {
  return graphrt_api_guard([] { runtime_init(); });
}

// The C names of the kinds are the enum's values.
static_assert(GRAPHRT_ERROR_INVALID_ARGUMENT == static_cast<int>(ErrorKind::kInvalidArgument), "kind code");
static_assert(GRAPHRT_ERROR_NOT_FOUND == static_cast<int>(ErrorKind::kNotFound), "kind code");
static_assert(GRAPHRT_ERROR_OUT_OF_RANGE == static_cast<int>(ErrorKind::kOutOfRange), "kind code");
static_assert(GRAPHRT_ERROR_UNSUPPORTED == static_cast<int>(ErrorKind::kUnsupported), "kind code");
static_assert(GRAPHRT_ERROR_RESOURCE_EXHAUSTED == static_cast<int>(ErrorKind::kResourceExhausted), "kind code");
static_assert(GRAPHRT_ERROR_DEVICE == static_cast<int>(ErrorKind::kDevice), "kind code");
static_assert(GRAPHRT_ERROR_INTERRUPTED == static_cast<int>(ErrorKind::kInterrupted), "kind code");
static_assert(GRAPHRT_ERROR_TYPE_MISMATCH == static_cast<int>(ErrorKind::kTypeMismatch), "kind code");
static_assert(GRAPHRT_ERROR_FAILED_PRECONDITION == static_cast<int>(ErrorKind::kFailedPrecondition), "kind code");
static_assert(GRAPHRT_ERROR_INTERNAL == static_cast<int>(ErrorKind::kInternal), "kind code");

extern "C" GRAPHRT_API int graphrt_last_error_kind(void) { return static_cast<int>(last_error_kind()); }

extern "C" GRAPHRT_API const char* graphrt_version(void) { return "graphrt 0.1.0 (TVM exports: v0.18 graph executor, v0.20 Relax, v0.22-v0.26 tvm-ffi)"; }

// ---- TVM's object, byte-array, scoped-memory and stream-pair calls ----

extern "C" GRAPHRT_API int TVMCbArgToReturn(TVMValue* value, int* code) {
  return c_api_guard([&] {
    if (!value || !code) throw Error("TVMCbArgToReturn: null value or code");
    switch (*code) {
      case kTVMObjectHandle: case kTVMModuleHandle: case kTVMPackedFuncHandle:
        if (value->v_handle) static_cast<Object*>(value->v_handle)->inc_ref();
        break;
      case kTVMNDArrayHandle:
        if (value->v_handle) NDArrayNode::from_handle(static_cast<DLTensor*>(value->v_handle))->inc_ref();
        break;
      case kTVMObjectRValueRefArg: {
        // The slot's reference moves to the receiver.
        auto** slot = static_cast<Object**>(value->v_handle);
        Object* object = slot ? *slot : nullptr;
        if (slot) *slot = nullptr;
        value->v_handle = object;
        *code = dynamic_cast<ModuleNode*>(object) ? kTVMModuleHandle
                : dynamic_cast<FunctionNode*>(object) ? kTVMPackedFuncHandle
                : object ? kTVMObjectHandle : kTVMNullptr;
        break;
      }
      case kTVMStr: case kTVMBytes:
        throw Error(ErrorKind::kTypeMismatch, std::string("TVMCbArgToReturn: a ") + type_code_name(*code) +
                    " argument cannot become a return value in place; return a copy with TVMCFuncSetReturn");
      default: break;  // plain values are their own return value
    }
  });
}

extern "C" GRAPHRT_API int TVMByteArrayFree(TVMByteArray* arr) {
  return c_api_guard([&] {
    // graphrt hands out only the per-thread byte array; nothing to free.
    if (arr && !is_returned_byte_array(arr))
      throw Error(ErrorKind::kTypeMismatch,
                  "TVMByteArrayFree: not a byte array returned by TVMFuncCall on this thread");
  });
}

extern "C" GRAPHRT_API int TVMObjectGetTypeIndex(TVMObjectHandle obj, unsigned* out_tindex) {
  return c_api_guard([&] {
    if (!obj) throw Error(ErrorKind::kTypeMismatch, "TVMObjectGetTypeIndex: null object handle");
    *out_tindex = object_type_index(*static_cast<Object*>(obj));
  });
}

// Not in TVM's headers, but exported by TVM's runtime for front ends that
// wrap kTVMNDArrayHandle returns.
extern "C" GRAPHRT_API int TVMArrayGetTypeIndex(TVMArrayHandle handle, unsigned* out_tindex) {
  return c_api_guard([&] {
    as_array(handle);
    *out_tindex = kObjectTypeIndexNDArray;
  });
}

extern "C" GRAPHRT_API int TVMObjectTypeKey2Index(const char* type_key, unsigned* out_tindex) {
  return c_api_guard([&] {
    if (!type_key) throw Error("TVMObjectTypeKey2Index: null type key");
    *out_tindex = object_type_index_of_key(type_key);
  });
}

extern "C" GRAPHRT_API int TVMObjectTypeIndex2Key(unsigned tindex, char** out_type_key) {
  return c_api_guard([&] { *out_type_key = const_cast<char*>(thread_local_string(object_type_key_of_index(tindex))); });
}

extern "C" GRAPHRT_API int TVMObjectDerivedFrom(uint32_t child_type_index, uint32_t parent_type_index, int* is_derived) {
  return c_api_guard([&] { *is_derived = object_type_derived_from(child_type_index, parent_type_index) ? 1 : 0; });
}

extern "C" GRAPHRT_API int TVMDeviceAllocDataSpaceWithScope(DLDevice dev, int ndim, const int64_t* shape, DLDataType dtype,
                                                      const char* mem_scope, void** out_data) {
  return c_api_guard([&] {
    if (mem_scope && std::strcmp(mem_scope, "global") != 0)
      throw Error(ErrorKind::kUnsupported,
                  std::string("memory scope '") + mem_scope + "' is not supported (graphrt allocates \"global\" only)")
          .with("device", device_to_string(dev));
    check_shape(shape, ndim, "TVMDeviceAllocDataSpaceWithScope");
    *out_data = device_api(dev)->alloc(dev, dtype_bytes(dtype, shape_numel(shape, ndim)), 64);  // NDArray::empty's alignment (DLPack's recommendation)
  });
}

extern "C" GRAPHRT_API int TVMStreamStreamSynchronize(int device_type, int device_id, TVMStreamHandle src,
                                                TVMStreamHandle dst) {
  return c_api_guard([&] {
    DLDevice dev = make_device(device_type, device_id);
    device_api(dev)->sync_stream_from_to(dev, src, dst);
  });
}

extern "C" GRAPHRT_API void graphrt_set_log_callback(graphrt_log_callback callback, void* user_data) {
  // The C callback's level is the LogLevel's number; one trampoline keeps both.
  struct Forward {
    graphrt_log_callback callback;
    void* user_data;
  };
  static Forward forward;
  graphrt::set_log_callback(nullptr, nullptr);  // returns once no call is using `forward`
  forward = Forward{callback, user_data};
  graphrt::set_log_callback(callback ? [](graphrt::LogLevel level, const char* message, void* data) {
    auto* f = static_cast<Forward*>(data);
    f->callback(static_cast<int>(level), message, f->user_data);
  } : graphrt::LogCallback(nullptr), &forward);
}
