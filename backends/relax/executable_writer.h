// Writes a Relax executable in the record format executable_reader reads
// (TVM's SaveToBinary layout): for tools, tests and the fuzz corpus.
#pragma once

#include <string>

#include "backends/relax/executable.h"

namespace graphrt {
namespace relax {

// The executable's bytes (what the record's length-prefixed string holds).
std::string write_executable(const Executable& exe);
// The record payload: the executable as one length-prefixed string.
std::string write_executable_record(const Executable& exe);

}  // namespace relax
}  // namespace graphrt
