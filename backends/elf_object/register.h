// The "elf-object" back end's one registration point (called from
// backends/register_all.cc): the loader of TVM's .tar exports, bare .o files
// and tvmc packages, with the content probe that claims them.
#pragma once

#include "graphrt/runtime.h"

namespace graphrt {
namespace elf_object {

void register_backend(Runtime& runtime);

}  // namespace elf_object
}  // namespace graphrt
