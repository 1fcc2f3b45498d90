// The error of a kernel (a packed C function) that returned non-zero. A kernel reports
// its reason with TVMAPISetLastError; one that returns -1 without doing so must not be
// given whatever an earlier call left in the thread's last error (that error and the
// context added to it would then reappear, one call after another).
#pragma once

#include <cstdint>
#include <string>

#include "graphrt/error.h"

namespace graphrt {

// A counter the thread's last error advances each time it is set. Read it before
// calling a kernel (or a run of kernels) and hand it to kernel_failure.
uint64_t last_error_generation();

// The error for kernel `function` having failed: the thread's last error when it was set
// after `generation_before` was read, else "kernel 'F' failed without a message".
Error kernel_failure(const std::string& function, uint64_t generation_before);

}  // namespace graphrt
