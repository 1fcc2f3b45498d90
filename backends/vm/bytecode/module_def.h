// graphrt::vm::ModuleDef — the plain data of a bytecode module, exactly what
// the binary format (binary_format.h) stores and the assembler produces.
// Nothing here is trusted until verify_module() accepted it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/vm/host/module.h"

namespace graphrt {
namespace vm {

struct FunctionDef {
  std::string name;       // unique in the module, no '.'
  std::string signature;  // cconv, no variadic spans
  bool exported = false;
  // Register counts per bank, indexed by ValueType (i32, i64, f32, f64, ref).
  std::array<uint16_t, kValueTypeCount> registers{};
  std::vector<uint8_t> code;
};

// A module-level variable: one typed slot per context (zero / null until
// `__init` or a function stores to it), read and written with
// global.load.<type> / global.store.<type>.
struct GlobalDef {
  std::string name;  // unique among globals, no '.'
  ValueType type = ValueType::kI32;
};

struct ModuleDef {
  std::string name;
  uint32_t version = 0;
  std::vector<Dependency> dependencies;
  std::vector<ImportDecl> imports;
  std::vector<std::string> rodata;  // byte strings (messages, kernel names, data)
  std::vector<GlobalDef> globals;
  std::vector<FunctionDef> functions;
};

}  // namespace vm
}  // namespace graphrt
