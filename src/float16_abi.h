// The compiler-runtime float16/bfloat16 conversion helpers that generated
// code imports (__gnu_h2f_ieee, __truncdfhf2, ...), defined by libgraphrt for
// dlopen'd libraries and handed to the embedded ELF loader by name.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace graphrt {

// (name, address) of every helper. The addresses are graphrt's own
// definitions, never an interposed one from another library.
const std::vector<std::pair<std::string, void*>>& float16_abi_symbols();

}  // namespace graphrt
