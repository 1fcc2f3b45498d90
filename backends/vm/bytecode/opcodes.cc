#include "backends/vm/bytecode/opcodes.h"

#include <unordered_map>

namespace graphrt {
namespace vm {
namespace {

constexpr bool T = true;

const OpInfo kOpTable[] = {
#define GRAPHRT_VM_OP_INFO(id, mnemonic, operands, flags) {mnemonic, operands, flags},
    GRAPHRT_VM_OPCODES(GRAPHRT_VM_OP_INFO)
#undef GRAPHRT_VM_OP_INFO
};
static_assert(sizeof(kOpTable) / sizeof(kOpTable[0]) == kOpcodeCount, "op table out of step");
static_assert(kOpcodeCount <= 256, "opcodes must fit in one byte");

}  // namespace

const OpInfo* op_info(uint8_t opcode) { return opcode < kOpcodeCount ? &kOpTable[opcode] : nullptr; }

int opcode_from_mnemonic(const std::string& mnemonic) {
  static const std::unordered_map<std::string, int> by_name = [] {
    std::unordered_map<std::string, int> map;
    for (int i = 0; i < kOpcodeCount; ++i) map[kOpTable[i].mnemonic] = i;
    return map;
  }();
  auto it = by_name.find(mnemonic);
  return it == by_name.end() ? -1 : it->second;
}

}  // namespace vm
}  // namespace graphrt
