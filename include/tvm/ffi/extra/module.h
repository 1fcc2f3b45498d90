// tvm::ffi::Module: a loaded TVM v0.22+ export (or any graphrt module), as TVM's C++ API
// has it: mod->GetFunction(name) returns Optional<Function>.
//
//   tvm::ffi::Module lib = tvm::ffi::Module::LoadFromFile("deploy_relax.so");
//   tvm::ffi::Module vm = lib->GetFunction("vm_load_executable").value()().cast<tvm::ffi::Module>();
#ifndef TVM_FFI_EXTRA_MODULE_H_
#define TVM_FFI_EXTRA_MODULE_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstddef>
#include <optional>
#include <utility>

#include "graphrt/module.h"
#include "graphrt/packed_func.h"
#include "tvm/runtime/c_runtime_api.h"

namespace tvm {
namespace ffi {

class Module;

// What mod-> reaches: the module's functions and imports.
class ModuleObj {
 public:
  explicit ModuleObj(::graphrt::Module m) : m_(std::move(m)) {}

  // The module's kind ("relax.VMExecutable", "GraphExecutorFactory", "library", ...).
  String kind() const { return String(m_->type_key()); }
  // The module's own function `name` (query_imports: then its imports', depth first), or nullopt.
  Optional<Function> GetFunction(const String& name) { return GetFunction(name, false); }
  Optional<Function> GetFunction(const String& name, bool query_imports) {
    ::graphrt::PackedFunc f =
        details::translate_errors([&] { return m_->get_function(name.str(), query_imports); });
    if (!f) return Optional<Function>();
    return Optional<Function>(Function(std::move(f)));
  }
  bool ImplementsFunction(const String& name) { return GetFunction(name).has_value(); }
  bool ImplementsFunction(const String& name, bool query_imports) {
    return GetFunction(name, query_imports).has_value();
  }
  inline void ImportModule(const Module& other);
  inline Array<Any> imports() const;

 private:
  ::graphrt::Module m_;
};

namespace details {
// mod->...: a temporary that holds the module's view for the expression.
class ModuleObjAccess {
 public:
  explicit ModuleObjAccess(::graphrt::Module m) : obj_(std::move(m)) {}
  ModuleObj* operator->() { return &obj_; }

 private:
  ModuleObj obj_;
};
}  // namespace details

class Module {
 public:
  Module() = default;
  explicit Module(::graphrt::Module m) : m_(std::move(m)) {}

  // Loads a TVM export (a shared library, or a .tar of one), as TVM's runtime loads it.
  static Module LoadFromFile(const String& file_name) {
    TVMModuleHandle handle = nullptr;
    if (TVMModLoadFromFile(file_name.c_str(), "", &handle) != 0) throw Error(::graphrt::last_error_as_exception());
    return Module(::graphrt::Module::adopt(static_cast<::graphrt::ModuleNode*>(handle)));
  }

  details::ModuleObjAccess operator->() const {
    if (!m_) TVM_FFI_THROW(RuntimeError) << "use of a null Module";
    return details::ModuleObjAccess(m_);
  }
  bool defined() const { return static_cast<bool>(m_); }
  bool operator==(std::nullptr_t) const { return !m_; }
  bool operator!=(std::nullptr_t) const { return static_cast<bool>(m_); }
  bool same_as(const Module& other) const { return m_ == other.m_; }
  const ::graphrt::Module& graphrt_module() const { return m_; }

 private:
  ::graphrt::Module m_;
};

template <>
struct TypeTraits<Module> {
  static void Into(const Module& v, details::PackedValue* out) {
    if (v.defined()) out->owned().set_module(v.graphrt_module());
    else out->owned().set_none();
  }
  static std::optional<Module> TryFrom(const details::PackedValue& v) {
    if (v.code() != kTVMModuleHandle) return std::nullopt;
    TVMValue value;
    int code;
    return Module(v.view(&value, &code).as_module(0));
  }
  static std::string TypeName() { return "ffi.Module"; }
};

inline void ModuleObj::ImportModule(const Module& other) {
  details::translate_errors([&] { m_->add_import(other.graphrt_module()); });
}
inline Array<Any> ModuleObj::imports() const {
  Array<Any> out;
  for (const ::graphrt::Module& m : m_->imports()) out.push_back(Any(Module(m)));
  return out;
}


}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_EXTRA_MODULE_H_
