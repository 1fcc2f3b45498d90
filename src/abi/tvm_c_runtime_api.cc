// TVM's C runtime API (c_runtime_api.h) as TVM's own runtime exports it, so that code and
// libraries written against TVM call graphrt unchanged: modules, packed functions, arrays,
// devices and streams, objects.
#include "layer_api/user_mistakes.h"
#include "graphrt/c_api.h"
#include "graphrt/log.h"

#include <cstring>

#include "abi/c_api_support.h"
#include "graphrt/runtime.h"
#include "abi/object_types.h"
#include "threading/thread_pool.h"
#include "abi/c_handles.h"

using namespace graphrt;
using namespace graphrt::c_handles;

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

