#include "modules/vm/dynamic_module.h"

#include <dlfcn.h>

#include "graphrt/error.h"
#include "modules/vm/module_address.h"
#include "modules/vm/native_module.h"
#include "modules/vm/tensor.h"
#include "modules/vm/vm_dynamic_module_abi.h"

namespace graphrt {
namespace vm {
namespace {

constexpr size_t kErrorCapacity = 512;

class SharedLibrary {
 public:
  explicit SharedLibrary(const std::string& path) : path_(path) {
    // RTLD_LOCAL: each module library keeps its own symbols, as in IREE.
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw Error(std::string("cannot load VM module library: ") + dlerror()).with("file", path);
  }
  ~SharedLibrary() { dlclose(handle_); }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  void* symbol(const std::string& name) const {
    void* p = dlsym(handle_, name.c_str());
    if (!p) throw Error("VM module library lacks its creation function").with("file", path_).with("symbol", name);
    return p;
  }

 private:
  std::string path_;
  void* handle_ = nullptr;
};

graphrt_vm_abi_value to_abi(const Value& v) {
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

Value from_abi(ValueType type, const graphrt_vm_abi_value& v) {
  switch (type) {
    case ValueType::kI32: return Value::from_i32(v.i32);
    case ValueType::kI64: return Value::from_i64(v.i64);
    case ValueType::kF32: return Value::from_f32(v.f32);
    case ValueType::kF64: return Value::from_f64(v.f64);
    case ValueType::kRef: break;
  }
  throw Error("dynamic module results cannot be refs");
}

NativeFunction wrap_function(const graphrt_vm_abi_function& f, void* self) {
  const Signature sig = parse_signature(f.signature);
  const std::vector<ValueType> result_types = sig.result_types();
  if (sig.is_variadic()) throw Error("dynamic module functions cannot be variadic").with("function", f.name);
  for (ValueType t : result_types) {
    if (t == ValueType::kRef) throw Error("dynamic module results cannot be refs").with("function", f.name);
  }
  const graphrt_vm_abi_function_fn fn = f.fn;
  return [fn, self, result_types](NativeCall& c) {
    std::vector<graphrt_vm_abi_value> args;
    for (const Value& v : c.args()) args.push_back(to_abi(v));
    std::vector<graphrt_vm_abi_value> results(result_types.size());
    char error[kErrorCapacity] = {0};
    if (fn(self, args.data(), args.size(), results.data(), results.size(), error, kErrorCapacity) != 0) {
      error[kErrorCapacity - 1] = '\0';
      throw Error(std::string("dynamic module function failed: ") + error);
    }
    for (size_t k = 0; k < results.size(); ++k) c.ret(from_abi(result_types[k], results[k]));
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

std::shared_ptr<Module> load_dynamic_module(const std::string& address) {
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
    if (abi.abi_version != GRAPHRT_VM_DYNAMIC_ABI_VERSION) {
      throw Error("VM module ABI version mismatch: library has " + std::to_string(abi.abi_version) +
                  ", runtime supports " + std::to_string(GRAPHRT_VM_DYNAMIC_ABI_VERSION))
          .with("symbol", create_name);
    }
    std::vector<NativeFunction> functions;
    for (size_t k = 0; k < abi.function_count; ++k) functions.push_back(wrap_function(abi.functions[k], abi.self));
    auto module = std::make_shared<DynamicModule>(library, abi);
    guard.module = nullptr;  // from here on the DynamicModule owns destroy()
    for (size_t k = 0; k < abi.function_count; ++k) {
      module->add_function(abi.functions[k].name, abi.functions[k].signature, functions[k]);
    }
    return module;
  } catch (Error& e) {
    throw e.with("file", parsed.path);
  }
}

}  // namespace vm
}  // namespace graphrt
