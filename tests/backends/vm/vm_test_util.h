// Helpers for the VM tests: assemble + verify + link a program and call it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/host/context.h"
#include "backends/vm/host/native_module.h"
#include "backends/vm/host/vm_value.h"
#include "graphrt/error.h"

namespace vm_test {

using graphrt::vm::Value;

// Assembles `source` and verifies it (throws on any error).
std::shared_ptr<graphrt::vm::BytecodeModule> build(const std::string& source);

// A context holding the tensor module, `extra` modules, then `source`.
struct Harness {
  explicit Harness(const std::string& source,
                   std::vector<std::shared_ptr<graphrt::vm::VmModule>> extra = {});
  std::vector<Value> call(const std::string& function, const std::vector<Value>& args);
  std::unique_ptr<graphrt::vm::Context> context;
  std::string module_name;
};

inline Value I(int32_t v) { return Value::from_i32(v); }
inline Value L(int64_t v) { return Value::from_i64(v); }
inline Value F(float v) { return Value::from_f32(v); }
inline Value D(double v) { return Value::from_f64(v); }

}  // namespace vm_test
