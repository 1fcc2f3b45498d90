// A Model's params from a params cache file (graphrt/params_cache.h): the
// root module's own params (a graph executor factory's, a Relax executable's
// tensor constants) through its TVM-compatible face, before any executor or VM
// is made over it.
#include "graphrt/params_cache.h"

#include "model_state.h"

namespace graphrt {

void use_root_params_cache(const Module& root, const ModelSource& source) {
  if (source.params_cache.empty()) return;
  try {
    call_function(root->require_function("use_params_cache"),
                  ArgList().add_string(source.params_cache).add_string(source.path));
  } catch (Error& e) {
    throw e.with("params cache", source.params_cache);
  }
}

}  // namespace graphrt
