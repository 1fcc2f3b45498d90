#include "backends/vm/host/dynamic_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <exception>
#include <memory>
#include <vector>

#include "graphrt/regular_file.h"
#include "graphrt/error.h"
#include "backends/vm/host/buffer.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/host/list.h"
#include "backends/vm/host/module_address.h"
#include "backends/vm/host/native_module.h"
#include "backends/vm/host/tensor.h"
#include "backends/vm/host/vm_dynamic_module_abi.h"

namespace graphrt {
namespace vm {
namespace {

constexpr size_t kErrorCapacity = 512;

// Why dlopen refused a path, as a kind: a missing file, or a file it could not load.
ErrorKind path_kind(const std::string& path) {
  return Error::kind_of_errno(access(path.c_str(), F_OK) == 0 ? 0 : errno);
}

class SharedLibrary {
 public:
  explicit SharedLibrary(const std::string& path) : path_(path) {
    // dlopen would block on a FIFO and read a device: only regular files go to it.
    require_regular_file(path, "VM module library");
    // RTLD_LOCAL: each module library keeps its own symbols, as in IREE.
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw Error(path_kind(path), std::string("cannot load VM module library: ") + dlerror()).with("file", path);
  }
  ~SharedLibrary() { dlclose(handle_); }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  void* symbol(const std::string& name) const {
    void* p = dlsym(handle_, name.c_str());
    if (!p) throw Error(ErrorKind::kNotFound,
                        "VM module library lacks its creation function").with("file", path_).with("symbol", name);
    return p;
  }

 private:
  std::string path_;
  void* handle_ = nullptr;
};

// ---- ABI v1: scalars, tensors as DLTensor*, no ref results.

graphrt_vm_abi_value to_abi_v1(const Value& v) {
  graphrt_vm_abi_value out{};
  switch (v.type) {
    case ValueType::kI32: out.i32 = v.i32; break;
    case ValueType::kI64: out.i64 = v.i64; break;
    case ValueType::kF32: out.f32 = v.f32; break;
    case ValueType::kF64: out.f64 = v.f64; break;
    case ValueType::kRef: {
      Tensor* t = ref_as<Tensor>(v.ref);
      out.tensor = t ? t->dl() : nullptr;
      break;
    }
  }
  return out;
}

Value scalar_from_abi(ValueType type, const graphrt_vm_abi_value& v) {
  switch (type) {
    case ValueType::kI32: return Value::from_i32(v.i32);
    case ValueType::kI64: return Value::from_i64(v.i64);
    case ValueType::kF32: return Value::from_f32(v.f32);
    case ValueType::kF64: return Value::from_f64(v.f64);
    case ValueType::kRef: break;
  }
  throw Error(ErrorKind::kUnsupported, "dynamic module ABI v1 results cannot be refs");
}

std::vector<ValueType> checked_result_types(const Signature& sig, const char* name, bool refs_allowed) {
  if (sig.is_variadic()) throw Error(ErrorKind::kUnsupported,
                                     "dynamic module functions cannot be variadic").with("function", name);
  const std::vector<ValueType> types = sig.result_types();
  for (ValueType t : types) {
    if (t == ValueType::kRef && !refs_allowed) {
      throw Error(ErrorKind::kUnsupported,
                  "dynamic module results cannot be refs in ABI v1 (use v2)").with("function", name);
    }
  }
  return types;
}

NativeFunction wrap_function_v1(const graphrt_vm_abi_function& f, void* self) {
  const std::vector<ValueType> result_types = checked_result_types(parse_signature(f.signature), f.name, false);
  const graphrt_vm_abi_function_fn fn = f.fn;
  return [fn, self, result_types](NativeCall& c) {
    std::vector<graphrt_vm_abi_value> args;
    for (const Value& v : c.args()) args.push_back(to_abi_v1(v));
    std::vector<graphrt_vm_abi_value> results(result_types.size());
    char error[kErrorCapacity] = {0};
    if (fn(self, args.data(), args.size(), results.data(), results.size(), error, kErrorCapacity) != 0) {
      error[kErrorCapacity - 1] = '\0';
      throw Error(std::string("dynamic module function failed: ") + error);
    }
    for (size_t k = 0; k < results.size(); ++k) c.ret(scalar_from_abi(result_types[k], results[k]));
  };
}

}  // namespace
}  // namespace vm
}  // namespace graphrt

// ---- ABI v2: refs as handles, host services, imports.

// A handle is a box around one reference; boxes are never shared.
struct graphrt_vm_abi_ref {
  graphrt::vm::VmRef ref;
};

namespace graphrt {
namespace vm {
namespace {

using RefBox = std::unique_ptr<graphrt_vm_abi_ref>;

struct AbiImport {
  std::string full_name;
  Signature signature;
};

// What the host keeps per running v2 call (graphrt_vm_abi_call::host_data).
struct CallState {
  NativeCall* native;
  const std::vector<AbiImport>* imports;
  std::exception_ptr error;  // the first failure of a host function
};

CallState& state_of(graphrt_vm_abi_call* call) { return *static_cast<CallState*>(call->host_data); }

// Runs a host service: C++ errors stay on this side, remembered in the call.
template <typename R, typename F>
R guarded(graphrt_vm_abi_call* call, R failure, F f) {
  try {
    if (!call || !call->host_data) return failure;
    return f();
  } catch (...) {
    CallState& state = state_of(call);
    if (!state.error) state.error = std::current_exception();
    return failure;
  }
}

graphrt_vm_abi_ref* new_box(VmRef ref) { return ref ? new graphrt_vm_abi_ref{std::move(ref)} : nullptr; }
const VmRef& ref_of(const graphrt_vm_abi_ref* box) {
  static const VmRef kNull;
  return box ? box->ref : kNull;
}

// A Value as an ABI value whose ref (if any) is a new box owned by the receiver.
graphrt_vm_abi_value to_abi_v2(const Value& v) {
  graphrt_vm_abi_value out{};
  if (v.type == ValueType::kRef) {
    out.ref = new_box(v.ref);
    return out;
  }
  return to_abi_v1(v);
}

// An ABI value of `type` as a Value; a ref is shared, its box stays the caller's.
Value from_abi_v2(ValueType type, const graphrt_vm_abi_value& v) {
  if (type == ValueType::kRef) return Value::from_ref(ref_of(v.ref));
  return scalar_from_abi(type, v);
}

ValueType abi_type(int type) {
  if (type < GRAPHRT_VM_ABI_I32 || type > GRAPHRT_VM_ABI_REF) throw Error("invalid ABI value type " + std::to_string(type));
  return static_cast<ValueType>(type);
}

int host_ref_kind(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* ref) {
  return guarded(call, -1, [&] {
    const VmRef& r = ref_of(ref);
    if (!r) return static_cast<int>(GRAPHRT_VM_ABI_NULL);
    switch (r->kind()) {
      case ObjectKind::kBuffer: return static_cast<int>(GRAPHRT_VM_ABI_BUFFER);
      case ObjectKind::kList: return static_cast<int>(GRAPHRT_VM_ABI_LIST);
      case ObjectKind::kTensor: return static_cast<int>(GRAPHRT_VM_ABI_TENSOR);
    }
    return -1;
  });
}

graphrt_vm_abi_ref* host_ref_clone(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* ref) {
  return guarded(call, static_cast<graphrt_vm_abi_ref*>(nullptr), [&] { return new_box(ref_of(ref)); });
}

void host_ref_release(graphrt_vm_abi_call*, graphrt_vm_abi_ref* ref) { delete ref; }

DLTensor* host_tensor_dl(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* ref) {
  return guarded(call, static_cast<DLTensor*>(nullptr), [&] {
    Tensor* t = ref_as<Tensor>(ref_of(ref));
    return t ? t->dl() : nullptr;
  });
}

graphrt_vm_abi_ref* host_tensor_create(graphrt_vm_abi_call* call, int ndim, const int64_t* shape, DLDataType dtype) {
  return guarded(call, static_cast<graphrt_vm_abi_ref*>(nullptr), [&] {
    if (ndim < 0 || ndim > 32 || (ndim > 0 && !shape)) throw Error("tensor_create: invalid shape (ndim " + std::to_string(ndim) + ")");
    return new_box(std::make_shared<OwnedTensor>(std::vector<int64_t>(shape, shape + ndim), dtype));
  });
}

uint8_t* host_buffer_data(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* ref, size_t* size, int* writable) {
  return guarded(call, static_cast<uint8_t*>(nullptr), [&]() -> uint8_t* {
    Buffer* b = ref_as<Buffer>(ref_of(ref));
    if (!b) return nullptr;
    if (size) *size = b->bytes().size();
    if (writable) *writable = b->read_only() ? 0 : 1;
    static uint8_t empty = 0;  // non-NULL for an empty buffer: NULL means "not a buffer"
    return b->bytes().empty() ? &empty : b->bytes().data();
  });
}

graphrt_vm_abi_ref* host_buffer_create(graphrt_vm_abi_call* call, const void* data, size_t size) {
  return guarded(call, static_cast<graphrt_vm_abi_ref*>(nullptr), [&] {
    if (size > static_cast<size_t>(limits().max_buffer_bytes)) throw Error(ErrorKind::kResourceExhausted,
                                                                           "buffer_create: " + std::to_string(size) + " bytes is over the limit");
    if (size && !data) throw Error("buffer_create: NULL data");
    const uint8_t* bytes = static_cast<const uint8_t*>(data);
    return new_box(std::make_shared<Buffer>(std::vector<uint8_t>(bytes, bytes + size)));
  });
}

List& list_of(const graphrt_vm_abi_ref* ref) {
  List* l = ref_as<List>(ref_of(ref));
  if (!l) throw Error(ErrorKind::kTypeMismatch, "expected a list ref");
  return *l;
}

int64_t host_list_size(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* list) {
  return guarded(call, static_cast<int64_t>(-1), [&] {
    List* l = ref_as<List>(ref_of(list));
    return l ? l->size() : static_cast<int64_t>(-1);
  });
}

int host_list_get(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* list, int64_t index, int* type,
                  graphrt_vm_abi_value* out) {
  return guarded(call, -1, [&] {
    const List& l = list_of(list);
    if (index < 0 || index >= l.size()) {
      throw Error(ErrorKind::kOutOfRange,
                  "list index " + std::to_string(index) + " out of range (size " + std::to_string(l.size()) + ")");
    }
    const Value& v = l.at(index);
    if (type) *type = static_cast<int>(v.type);
    if (out) *out = to_abi_v2(v);
    return 0;
  });
}

int host_list_push(graphrt_vm_abi_call* call, graphrt_vm_abi_ref* list, int type, graphrt_vm_abi_value value) {
  return guarded(call, -1, [&] {
    List& l = list_of(list);
    const int64_t n = l.size();
    l.resize(n + 1);
    try {
      l.set(n, from_abi_v2(abi_type(type), value));
    } catch (...) {
      l.resize(n);
      throw;
    }
    return 0;
  });
}

graphrt_vm_abi_ref* host_list_create(graphrt_vm_abi_call* call) {
  return guarded(call, static_cast<graphrt_vm_abi_ref*>(nullptr), [] { return new_box(std::make_shared<List>()); });
}

int host_call_import(graphrt_vm_abi_call* call, size_t index, const graphrt_vm_abi_value* args, size_t arg_count,
                     graphrt_vm_abi_value* results, size_t result_count) {
  return guarded(call, -1, [&] {
    CallState& state = state_of(call);
    if (index >= state.imports->size()) throw Error(ErrorKind::kOutOfRange,
                                                    "call_import: import " + std::to_string(index) + " does not exist");
    const AbiImport& import = (*state.imports)[index];
    const Signature& sig = import.signature;
    const std::vector<ValueType> arg_types = sig.arg_types();
    const std::vector<ValueType> result_types = sig.result_types();
    if (arg_count != arg_types.size() || result_count != result_types.size() || (arg_count && !args) ||
        (result_count && !results)) {
      throw Error(ErrorKind::kTypeMismatch,
                  "call_import: import " + std::to_string(index) + " is " + sig.to_string() + ", called with " +
                  std::to_string(arg_count) + " arguments and " + std::to_string(result_count) + " results");
    }
    std::vector<Value> values;
    for (size_t k = 0; k < arg_count; ++k) values.push_back(from_abi_v2(arg_types[k], args[k]));
    std::vector<Value> out;
    try {
      out = state.native->call_import(index, values);
    } catch (Error& e) {
      if (e.context_value("import").empty()) e.with("import", import.full_name);
      throw;
    }
    for (size_t k = 0; k < result_count; ++k) results[k] = to_abi_v2(out[k]);
    return 0;
  });
}

const graphrt_vm_abi_host kHost = {
    GRAPHRT_VM_DYNAMIC_ABI_VERSION,
    host_ref_kind,
    host_ref_clone,
    host_ref_release,
    host_tensor_dl,
    host_tensor_create,
    host_buffer_data,
    host_buffer_create,
    host_list_size,
    host_list_get,
    host_list_push,
    host_list_create,
    host_call_import,
};

NativeFunction wrap_function_v2(const graphrt_vm_abi_function2& f, void* self,
                                std::shared_ptr<const std::vector<AbiImport>> imports) {
  const Signature sig = parse_signature(f.signature);
  const std::vector<ValueType> result_types = checked_result_types(sig, f.name, true);
  const graphrt_vm_abi_function2_fn fn = f.fn;
  return [fn, self, result_types, imports](NativeCall& c) {
    CallState state{&c, imports.get(), nullptr};
    graphrt_vm_abi_call call{&kHost, &state};
    std::vector<RefBox> arg_boxes;  // the host owns argument handles for the call
    std::vector<graphrt_vm_abi_value> args;
    for (const Value& v : c.args()) {
      args.push_back(to_abi_v2(v));
      if (v.type == ValueType::kRef) arg_boxes.emplace_back(args.back().ref);
    }
    std::vector<graphrt_vm_abi_value> results(result_types.size());
    char error[kErrorCapacity] = {0};
    const int rc = fn(self, &call, args.data(), args.size(), results.data(), results.size(), error, kErrorCapacity);
    std::vector<RefBox> result_boxes;  // ref results become the host's now, on success or not
    for (size_t k = 0; k < results.size(); ++k) {
      if (result_types[k] == ValueType::kRef) result_boxes.emplace_back(results[k].ref);
    }
    if (rc != 0) {
      if (state.error) std::rethrow_exception(state.error);
      error[kErrorCapacity - 1] = '\0';
      throw Error(std::string("dynamic module function failed: ") + error);
    }
    for (size_t k = 0; k < results.size(); ++k) c.ret(from_abi_v2(result_types[k], results[k]));
  };
}

// A native module whose functions live in a shared library. The member order
// matters: the library handle is released after the destructor body has run
// the library's own destroy().
class DynamicModule : public NativeModule {
 public:
  DynamicModule(std::shared_ptr<SharedLibrary> library, const graphrt_vm_abi_module& abi)
      : NativeModule(abi.name ? abi.name : "", abi.version), library_(std::move(library)), abi_(abi) {}
  ~DynamicModule() override {
    if (abi_.destroy) abi_.destroy(abi_.self);
  }

 private:
  std::shared_ptr<SharedLibrary> library_;
  graphrt_vm_abi_module abi_;
};

// Calls destroy() when creation succeeded but the host refuses the module.
struct AbiModuleGuard {
  graphrt_vm_abi_module* module;
  ~AbiModuleGuard() {
    if (module && module->destroy) module->destroy(module->self);
  }
};

}  // namespace

std::shared_ptr<VmModule> load_dynamic_module(const std::string& address) {
  const ModuleAddress parsed = parse_module_address(address);
  const std::string create_name = parsed.create_fn.empty() ? GRAPHRT_VM_DYNAMIC_DEFAULT_CREATE : parsed.create_fn;
  try {
    auto library = std::make_shared<SharedLibrary>(parsed.path);
    auto create = reinterpret_cast<graphrt_vm_abi_create_fn>(library->symbol(create_name));
    std::vector<graphrt_vm_abi_string_pair> params;
    for (const auto& p : parsed.params) params.push_back({p.first.c_str(), p.second.c_str()});
    graphrt_vm_abi_module abi{};
    char error[kErrorCapacity] = {0};
    if (create(GRAPHRT_VM_DYNAMIC_ABI_VERSION, params.size(), params.data(), &abi, error, kErrorCapacity) != 0) {
      error[kErrorCapacity - 1] = '\0';
      throw Error(std::string("VM module creation failed: ") + error).with("symbol", create_name);
    }
    AbiModuleGuard guard{&abi};
    if (abi.abi_version < GRAPHRT_VM_DYNAMIC_ABI_MIN_VERSION || abi.abi_version > GRAPHRT_VM_DYNAMIC_ABI_VERSION) {
      throw Error(ErrorKind::kUnsupported,
                  "VM module ABI version mismatch: library has " + std::to_string(abi.abi_version) +
                  ", runtime supports " + std::to_string(GRAPHRT_VM_DYNAMIC_ABI_MIN_VERSION) + " to " +
                  std::to_string(GRAPHRT_VM_DYNAMIC_ABI_VERSION))
          .with("symbol", create_name);
    }
    const bool v2 = abi.abi_version >= 2;
    if (abi.function_count && !(v2 ? static_cast<const void*>(abi.functions2) : abi.functions)) {
      throw Error(std::string("VM module declares functions but gives no ") + (v2 ? "functions2" : "functions") +
                  " table").with("symbol", create_name);
    }
    if ((abi.import_count && (!v2 || !abi.imports)) || (abi.dependency_count && (!v2 || !abi.dependencies))) {
      throw Error("VM module imports and dependencies need ABI v2 and a table").with("symbol", create_name);
    }
    auto imports = std::make_shared<std::vector<AbiImport>>();
    for (size_t k = 0; k < abi.import_count; ++k) {
      const graphrt_vm_abi_import& i = abi.imports[k];
      if (!i.full_name || !i.signature) throw Error("VM module import without a name or signature").with("symbol", create_name);
      imports->push_back(AbiImport{i.full_name, parse_signature(i.signature)});
      if (imports->back().signature.is_variadic()) throw Error(ErrorKind::kUnsupported,
                                                               "dynamic module imports cannot be variadic").with("import", i.full_name);
    }
    std::vector<NativeFunction> functions;
    for (size_t k = 0; k < abi.function_count; ++k) {
      const char* name = v2 ? abi.functions2[k].name : abi.functions[k].name;
      const char* signature = v2 ? abi.functions2[k].signature : abi.functions[k].signature;
      const bool has_code = v2 ? abi.functions2[k].fn != nullptr : abi.functions[k].fn != nullptr;
      if (!name || !signature || !has_code) {
        throw Error("VM module function entry " + std::to_string(k) + " lacks a name, signature or code")
            .with("symbol", create_name);
      }
      functions.push_back(v2 ? wrap_function_v2(abi.functions2[k], abi.self, imports)
                             : wrap_function_v1(abi.functions[k], abi.self));
    }
    auto module = std::make_shared<DynamicModule>(library, abi);
    guard.module = nullptr;  // from here on the DynamicModule owns destroy()
    for (size_t k = 0; k < abi.dependency_count; ++k) {
      const graphrt_vm_abi_dependency& d = abi.dependencies[k];
      if (!d.name) throw Error("VM module dependency without a name").with("symbol", create_name);
      module->add_dependency(d.name, d.min_version, d.optional != 0);
    }
    for (size_t k = 0; k < abi.import_count; ++k) {
      module->add_import(abi.imports[k].full_name, abi.imports[k].signature, abi.imports[k].optional != 0);
    }
    for (size_t k = 0; k < abi.function_count; ++k) {
      module->add_function(v2 ? abi.functions2[k].name : abi.functions[k].name,
                           v2 ? abi.functions2[k].signature : abi.functions[k].signature, functions[k]);
    }
    return module;
  } catch (Error& e) {
    throw e.with("file", parsed.path);
  }
}

}  // namespace vm
}  // namespace graphrt
