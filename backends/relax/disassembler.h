// Text forms of an executable: `stats` (constant pool and function table in
// brief) and `as_text` (every function's code), in TVM's layout.
#pragma once

#include <string>

#include "backends/relax/executable.h"

namespace graphrt {
namespace relax {

std::string executable_stats(const Executable& exe);
// `exe` must have passed verify_executable().
std::string executable_text(const Executable& exe);

}  // namespace relax
}  // namespace graphrt
