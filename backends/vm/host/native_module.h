// graphrt::vm::NativeModule — VM modules written in C++.
//
//   auto m = std::make_shared<NativeModule>("math", /*version=*/2);
//   m->add_function("add", "0ii_i", [](NativeCall& c) { c.ret_i32(c.i32(0) + c.i32(1)); });
//
// Functions receive their arguments as Values laid out per the signature
// (variadic spans: i32 count then the tuples) and push results in order; the
// results are checked against the signature after the call, so a buggy native
// function is reported instead of corrupting bytecode registers. Native
// modules may import functions from other modules (add_import) and call them
// through NativeCall::call_import, which is how calls cross module boundaries
// in both directions.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/vm/host/module.h"
#include "backends/vm/host/signature.h"
#include "backends/vm/host/stack.h"

namespace graphrt {
namespace vm {

class NativeCall {
 public:
  NativeCall(Stack& stack, ModuleState& state, const std::vector<Value>& args, std::vector<Value>* results)
      : stack_(stack), state_(state), args_(args), results_(results) {}

  const std::vector<Value>& args() const { return args_; }
  int32_t i32(size_t k) const { return args_[k].i32; }
  int64_t i64(size_t k) const { return args_[k].i64; }
  float f32(size_t k) const { return args_[k].f32; }
  double f64(size_t k) const { return args_[k].f64; }
  const VmRef& ref(size_t k) const { return args_[k].ref; }

  void ret(Value v) { results_->push_back(std::move(v)); }
  void ret_i32(int32_t v) { ret(Value::from_i32(v)); }
  void ret_i64(int64_t v) { ret(Value::from_i64(v)); }
  void ret_f32(float v) { ret(Value::from_f32(v)); }
  void ret_f64(double v) { ret(Value::from_f64(v)); }
  void ret_ref(VmRef v) { ret(Value::from_ref(std::move(v))); }

  // Calls this module's import `index` (as declared by add_import).
  std::vector<Value> call_import(size_t index, const std::vector<Value>& args);
  ModuleState& state() { return state_; }
  Stack& stack() { return stack_; }

 private:
  Stack& stack_;
  ModuleState& state_;
  const std::vector<Value>& args_;
  std::vector<Value>* results_;
};

using NativeFunction = std::function<void(NativeCall&)>;

class NativeModule : public VmModule {
 public:
  NativeModule(std::string name, uint32_t version);

  // Each returns *this for chaining; signatures are validated here.
  NativeModule& add_dependency(const std::string& name, uint32_t min_version, bool optional = false);
  NativeModule& add_import(const std::string& full_name, const std::string& signature, bool optional = false);
  NativeModule& add_function(const std::string& name, const std::string& signature, NativeFunction fn);

  const std::string& name() const override { return name_; }
  uint32_t version() const override { return version_; }
  const std::vector<Dependency>& dependencies() const override { return dependencies_; }
  const std::vector<ImportDecl>& imports() const override { return imports_; }
  const std::vector<ExportDecl>& exports() const override { return exports_; }
  void call(Stack& stack, ModuleState& state, uint32_t ordinal, const std::vector<Value>& args,
            std::vector<Value>* results) override;

 private:
  std::string name_;
  uint32_t version_;
  std::vector<Dependency> dependencies_;
  std::vector<ImportDecl> imports_;
  std::vector<ExportDecl> exports_;
  std::vector<Signature> signatures_;
  std::vector<NativeFunction> functions_;
};

}  // namespace vm
}  // namespace graphrt
