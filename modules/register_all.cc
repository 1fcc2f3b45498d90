// The one place that registers every back end (design: explicit registration,
// no static initialisers). Called once by graphrt::runtime_init().
#include "graphrt/runtime.h"

namespace graphrt {

void register_builtin_modules() {
}

}  // namespace graphrt
