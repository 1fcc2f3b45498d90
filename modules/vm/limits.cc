#include "modules/vm/limits.h"

namespace graphrt {
namespace vm {

Limits& limits() {
  static Limits instance;
  return instance;
}

}  // namespace vm
}  // namespace graphrt
