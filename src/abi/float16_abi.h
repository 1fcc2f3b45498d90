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

// From an x87 80-bit extended value (long double on x86), read from its
// 10 bytes; the other architectures' long double is not handled here.
uint16_t float16_from_x87(const void* extended);
uint16_t bfloat16_from_x87(const void* extended);

}  // namespace graphrt
