// Core-internal helpers of library loading shared by the loaders and the blob reader.
#pragma once

#include <string>
#include <vector>

#include "graphrt/library.h"

namespace graphrt {

// How many bytes of the data symbol `name` at `address` may be read: its size
// where known, never past the end of its segment. Throws naming the symbol
// and the library when the address lies in no segment.
size_t readable_symbol_bytes(const Library& library, const std::string& name, const void* address);

// Every name runtime_symbol() answers (tests compare them with what generated code imports).
std::vector<std::string> runtime_symbol_names();

}  // namespace graphrt
