// The VM back end's single registration point (design: explicit registration
// from backends/register_all.cc, no static initialisers).
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace vm {

void register_backend(Runtime& runtime);

}  // namespace vm
}  // namespace graphrt
