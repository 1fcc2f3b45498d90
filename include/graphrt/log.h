// Warnings from the runtime (e.g. a CUDA graph that could not be captured, a
// system-lib symbol registered twice). The library never prints: messages go
// to the callback the application sets, and nowhere when none is set.
#pragma once

#include "graphrt/export.h"

#include <string>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

enum class LogLevel { kWarning = 1 };

using LogCallback = void (*)(LogLevel level, const char* message, void* user_data);

// Replaces the callback (nullptr: drop messages). Thread-safe; the callback
// may be called from any thread that runs graphrt.
void set_log_callback(LogCallback callback, void* user_data);
void log_warning(const std::string& message);

}  // namespace graphrt
#pragma GCC visibility pop
