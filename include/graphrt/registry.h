// The global function registry (TVM's "Registry"): name → packed function.
#pragma once

#include "graphrt/export.h"

#include <string>
#include <vector>

#include "graphrt/packed_func.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// Registers `f`; replaces an existing entry only when `override` is true.
void registry_set(const std::string& name, PackedFunc f, bool override = true);
PackedFunc registry_get(const std::string& name);  // null when absent
bool registry_remove(const std::string& name);
std::vector<std::string> registry_names();

}  // namespace graphrt
#pragma GCC visibility pop
