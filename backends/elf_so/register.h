// The "elf" back end's one registration point (called from
// backends/register_all.cc): the "elf" library loader (load_elf_library).
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace elf_so {

void register_backend(Runtime& runtime);

}  // namespace elf_so
}  // namespace graphrt
