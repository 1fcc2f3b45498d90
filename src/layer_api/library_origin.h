// Where a module tree's code came from, for back ends that resolve files
// relative to the model (the VM finds its dependency modules next to it).
#pragma once

#include <string>

#include "graphrt/module.h"

namespace graphrt {

// The origin of the library behind `context` (a path, or "<memory>"-style
// names for images not read from a file); "" when `context` is not a
// library's module.
std::string library_origin(const ModuleNode* context);

}  // namespace graphrt
