// The command-line flag that answers a library error. Library messages name
// API options, never app flags (the library has other users: C, C++, Python);
// an error that a load or executor option would fix carries the option in its
// "option" context value, and the apps map it to their flag here.
#pragma once

#include <string>

#include "graphrt/error.h"

namespace graphrt_apps {

// "--trust-exports" for an error whose "option" is "trust_exports"; "" when
// the error names no option that a flag sets.
std::string flag_hint(const graphrt::Error& e);

}  // namespace graphrt_apps
