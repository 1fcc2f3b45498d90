// The .vmbc binary container (all integers little-endian):
//
//   "GRVM"  u32 format_version (1 or 2)
//   str name, u32 module_version
//   u32 n, n x { str name, u32 min_version, u32 flags (bit0 = optional),
//                [v2] str source }                                         dependencies
//   u32 n, n x { str full_name, str signature, u32 flags (bit0 = optional) } imports
//   u32 n, n x str                                                         rodata
//   [v2] u32 n, n x { str name, u32 type (ValueType) }                     globals
//   u32 n, n x { str name, str signature, u32 flags (bit0 = exported),
//                5 x u16 register counts (i32 i64 f32 f64 ref), str code } functions
//   where str = u32 length + bytes.
//
// Version 2 adds dependency sources and globals; a module that uses neither
// is written as version 1, so older runtimes still read it. Both are read.
//
// Reading checks only container structure (bounds, magic, version, trailing
// bytes); the verifier judges the contents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/vm/bytecode/module_def.h"

namespace graphrt {
namespace vm {

constexpr uint32_t kBytecodeVersion = 2;  // newest format read and written
constexpr char kBytecodeMagic[4] = {'G', 'R', 'V', 'M'};

std::vector<uint8_t> write_module_def(const ModuleDef& def);
// Throws graphrt::Error with an "offset" context on malformed input.
ModuleDef read_module_def(const uint8_t* data, size_t size);
bool has_bytecode_magic(const uint8_t* data, size_t size);

}  // namespace vm
}  // namespace graphrt
