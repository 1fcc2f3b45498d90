// The one place that registers the layers above the core: the graph executor
// and every back end (explicit registration, no static initialisers). Called
// once by graphrt::runtime(), while it creates the Runtime; a back end left out of the build
// (GRAPHRT_BACKENDS) compiles its call away.
#include "graph/register_graph_executor.h"
#include "src/layer_api/layer_composition.h"

#ifdef GRAPHRT_WITH_CUDA
#include "modules/cuda/register.h"
#endif
#ifdef GRAPHRT_WITH_ELF
#include "modules/elf/register.h"
#endif
#ifdef GRAPHRT_WITH_VM
#include "modules/vm/register.h"
#endif
#ifdef GRAPHRT_WITH_RELAX
#include "modules/relax/register.h"
#endif

namespace graphrt {

void register_layers_above_core(Runtime& runtime) {
  register_graph_executor(runtime);
#ifdef GRAPHRT_WITH_CUDA
  cuda_backend::register_backend(runtime);
#endif
#ifdef GRAPHRT_WITH_ELF
  elf::register_backend(runtime);
#endif
#ifdef GRAPHRT_WITH_VM
  vm::register_backend(runtime);
#endif
#ifdef GRAPHRT_WITH_RELAX
  relax::register_backend(runtime);
#endif
}

}  // namespace graphrt
