#include "backends/relax/executable.h"

namespace graphrt {
namespace relax {

int64_t Executable::find_function(const std::string& name) const {
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace relax
}  // namespace graphrt
