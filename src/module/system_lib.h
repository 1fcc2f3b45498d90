// The system-lib symbol table: statically linked TVM code registers its
// functions here (TVMBackendRegisterSystemLibSymbol) instead of being dlopen'd.
#pragma once

#include <string>

namespace graphrt {

void system_lib_register_symbol(const std::string& name, void* ptr);

}  // namespace graphrt
