// The ELF back end's one registration point (called from
// modules/register_all.cc): the "elf" library loader (load_elf_library) and the
// "elf-object" loader for TVM's .tar exports.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace elf {

void register_backend(Runtime& runtime);

}  // namespace elf
}  // namespace graphrt
