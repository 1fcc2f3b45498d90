// The one place that registers every back end (design: explicit registration,
// no static initialisers). Called once by graphrt::runtime_init(); a back end
// left out of the build (GRAPHRT_BACKENDS) compiles its call away.
#include "graphrt/runtime.h"

#ifdef GRAPHRT_WITH_CUDA
#include "modules/cuda/cuda_registration.h"
#endif
#ifdef GRAPHRT_WITH_ELF
#include "modules/elf/elf_library.h"
#endif
#ifdef GRAPHRT_WITH_VM
#include "modules/vm/register.h"
#endif

namespace graphrt {

void register_builtin_modules() {
#ifdef GRAPHRT_WITH_CUDA
  cuda_backend::register_module();
#endif
#ifdef GRAPHRT_WITH_ELF
  elf::register_module();
#endif
#ifdef GRAPHRT_WITH_VM
  vm::register_module();
#endif
}

}  // namespace graphrt
