// Load-time checks of a Relax executable: after verify_executable() returns,
// every instruction of every VM function reads and writes registers inside its
// register file, names constants and functions that exist, jumps inside its
// function and never falls off its end, and calls VM functions with their
// argument count; the interpreter relies on this and checks none of it.
#pragma once

#include <cstdint>

#include "backends/relax/executable.h"

namespace graphrt {
namespace relax {

// Register files above this are refused (a hostile size would be allocated per call).
constexpr int64_t kMaxRegisterFileSize = int64_t{1} << 20;

// Throws an Error naming the function and the field at fault.
void verify_executable(const Executable& exe);

}  // namespace relax
}  // namespace graphrt
