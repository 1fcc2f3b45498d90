// libgraphrt's composition unit, the top of the layers: it builds the
// process's default Runtime (an empty one, the core's registrations, then the
// graph executor and every back end built in; explicit registration, no
// static initialiser per layer) and installs that recipe into the core
// (src/layer_api/layer_composition.h). A back end left out of the build
// (GRAPHRT_BACKENDS) compiles its call away.
#include "graph/register_graph_executor.h"
#include "src/layer_api/layer_composition.h"

#ifdef GRAPHRT_WITH_CUDA
#include "backends/cuda/register.h"
#endif
#ifdef GRAPHRT_WITH_VULKAN
#include "backends/vulkan/register.h"
#endif
#ifdef GRAPHRT_WITH_ELF_SO
#include "backends/elf_so/register.h"
#endif
#ifdef GRAPHRT_WITH_ELF_OBJECT
#include "backends/elf_object/register.h"
#endif
#ifdef GRAPHRT_WITH_IREE_EXECUTABLE
#include "backends/iree_executable/register.h"
#endif
#ifdef GRAPHRT_WITH_VM
#include "backends/vm/register.h"
#endif
#ifdef GRAPHRT_WITH_RELAX
#include "backends/relax/register.h"
#endif
#ifdef GRAPHRT_WITH_CONTRIB_SORT
#include "backends/contrib_sort/register.h"
#endif
#ifdef GRAPHRT_WITH_OPENCL
#include "backends/opencl/register.h"
#endif

namespace graphrt {

namespace {

std::unique_ptr<Runtime> compose_default_runtime() {
  auto composed = std::make_unique<Runtime>();
  register_core(*composed);
  register_graph_executor(*composed);
#ifdef GRAPHRT_WITH_CUDA
  cuda_backend::register_backend(*composed);
#endif
#ifdef GRAPHRT_WITH_VULKAN
  vulkan_backend::register_backend(*composed);
#endif
#ifdef GRAPHRT_WITH_ELF_SO
  elf_so::register_backend(*composed);
#endif
#ifdef GRAPHRT_WITH_ELF_OBJECT
  elf_object::register_backend(*composed);
#endif
#ifdef GRAPHRT_WITH_IREE_EXECUTABLE
  iree_executable::register_backend(*composed);
#endif
#ifdef GRAPHRT_WITH_VM
  vm::register_backend(*composed);
#endif
#ifdef GRAPHRT_WITH_RELAX
  relax::register_backend(*composed);
#endif
#ifdef GRAPHRT_WITH_CONTRIB_SORT
  contrib_sort::register_backend(*composed);
#endif
#ifdef GRAPHRT_WITH_OPENCL
  opencl_backend::register_backend(*composed);
#endif
  return composed;
}

// The library's one initialiser, and the first to run (priority 101, the
// lowest a program may use): the recipe is in place before any other
// initialiser, and so any caller, can reach runtime(). It only stores a
// pointer; the runtime itself is still built lazily, on first use.
__attribute__((constructor(101))) void install_composition() {
  install_default_runtime_factory(&compose_default_runtime);
}

}  // namespace

}  // namespace graphrt
