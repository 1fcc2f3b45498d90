// ModuleDef -> text in the assembler's format (assembler.h); assembling the
// output yields the same ModuleDef (labels are named bb<offset>).
#pragma once

#include <string>

#include "backends/vm/bytecode/module_def.h"

namespace graphrt {
namespace vm {

// Throws graphrt::Error on undecodable bytecode; verify first for a precise
// diagnosis.
std::string disassemble(const ModuleDef& def);

// One instruction of function `function` at byte `pc`, e.g.
// "add.i32 %i2, %i0, %i1" (a block marker prints as its label "bb12:").
std::string disassemble_instruction(const ModuleDef& def, uint32_t function, uint32_t pc);

// A string literal with escapes (shared with the assembler's lexer rules). Not JSON, and so not
// graphrt/json_writer.h: rodata is bytes, not text, and its \x escapes carry every byte back
// through the assembler unchanged, where JSON's would replace what is not UTF-8.
std::string quote_string(const std::string& bytes);

}  // namespace vm
}  // namespace graphrt
