// The VM instruction set: one X-macro table that the assembler, the
// disassembler and the verifier all read (one operand description, three
// consumers, as in IREE's isa_decoder.inl). The interpreter decodes the same
// layouts by hand for speed; round-trip and verifier tests keep them in step.
//
// Opcode byte = position in this table. Changing the order changes the binary
// format, so bump kBytecodeVersion (binary_format.h) when editing it; new
// opcodes go at the end.
//
// Operand kinds (encoded in table order, little-endian, unaligned):
//   i I f F r  register of that bank (u16)
//   n N        immediate i32 / i64        x X   immediate f32 / f64
//   L          branch target (u32 byte offset of a `block` marker)
//   s          rodata index (u32)
//   g          global ordinal (u32); its type must match the op's register bank
//   c          call: u32 function, u16 n + n u16 arg regs, u16 m + m u16 result regs
//   v          variadic call: u32 function, u16 k + k u16 segment sizes, then as `c`
//   t          branch table: u16 n + n u32 targets
//   R          return list: u16 n + n u16 regs
// Register banks of call/return lists come from the callee/function signature.
// Function operand: bit 31 set = import ordinal, else internal function ordinal.
// Flags: T = terminator (ends a block).
#pragma once

#include <cstdint>
#include <string>

#define GRAPHRT_VM_OPCODES(OP)                        \
  /* control */                                       \
  OP(Block, "block", "", 0)                           \
  OP(Br, "br", "L", T)                                \
  OP(BrIf, "br_if", "iLL", T)                         \
  OP(BrTable, "br_table", "iLt", T)                   \
  OP(Call, "call", "c", 0)                            \
  OP(CallVariadic, "call.variadic", "v", 0)           \
  OP(Ret, "ret", "R", T)                              \
  OP(Fail, "fail", "is", T)                           \
  OP(Nop, "nop", "", 0)                               \
  /* constants */                                     \
  OP(ConstI32, "const.i32", "in", 0)                  \
  OP(ConstI64, "const.i64", "IN", 0)                  \
  OP(ConstF32, "const.f32", "fx", 0)                  \
  OP(ConstF64, "const.f64", "FX", 0)                  \
  OP(ConstRefNull, "const.ref.null", "r", 0)          \
  OP(ConstRefRodata, "const.ref.rodata", "rs", 0)     \
  /* moves and selects (select dst, cond, if_true, if_false) */ \
  OP(MovI32, "mov.i32", "ii", 0)                      \
  OP(MovI64, "mov.i64", "II", 0)                      \
  OP(MovF32, "mov.f32", "ff", 0)                      \
  OP(MovF64, "mov.f64", "FF", 0)                      \
  OP(MovRef, "mov.ref", "rr", 0)                      \
  OP(SelectI32, "select.i32", "iiii", 0)              \
  OP(SelectI64, "select.i64", "IiII", 0)              \
  OP(SelectF32, "select.f32", "fiff", 0)              \
  OP(SelectF64, "select.f64", "FiFF", 0)              \
  OP(SelectRef, "select.ref", "rirr", 0)              \
  /* i32 arithmetic (wrapping; division by zero traps) */ \
  OP(AddI32, "add.i32", "iii", 0)                     \
  OP(SubI32, "sub.i32", "iii", 0)                     \
  OP(MulI32, "mul.i32", "iii", 0)                     \
  OP(DivSI32, "div.s.i32", "iii", 0)                  \
  OP(DivUI32, "div.u.i32", "iii", 0)                  \
  OP(RemSI32, "rem.s.i32", "iii", 0)                  \
  OP(RemUI32, "rem.u.i32", "iii", 0)                  \
  OP(AndI32, "and.i32", "iii", 0)                     \
  OP(OrI32, "or.i32", "iii", 0)                       \
  OP(XorI32, "xor.i32", "iii", 0)                     \
  OP(ShlI32, "shl.i32", "iii", 0)                     \
  OP(ShrSI32, "shr.s.i32", "iii", 0)                  \
  OP(ShrUI32, "shr.u.i32", "iii", 0)                  \
  OP(MinSI32, "min.s.i32", "iii", 0)                  \
  OP(MaxSI32, "max.s.i32", "iii", 0)                  \
  OP(NotI32, "not.i32", "ii", 0)                      \
  OP(NegI32, "neg.i32", "ii", 0)                      \
  OP(AbsI32, "abs.i32", "ii", 0)                      \
  /* i64 arithmetic */                                \
  OP(AddI64, "add.i64", "III", 0)                     \
  OP(SubI64, "sub.i64", "III", 0)                     \
  OP(MulI64, "mul.i64", "III", 0)                     \
  OP(DivSI64, "div.s.i64", "III", 0)                  \
  OP(DivUI64, "div.u.i64", "III", 0)                  \
  OP(RemSI64, "rem.s.i64", "III", 0)                  \
  OP(RemUI64, "rem.u.i64", "III", 0)                  \
  OP(AndI64, "and.i64", "III", 0)                     \
  OP(OrI64, "or.i64", "III", 0)                       \
  OP(XorI64, "xor.i64", "III", 0)                     \
  OP(ShlI64, "shl.i64", "III", 0)                     \
  OP(ShrSI64, "shr.s.i64", "III", 0)                  \
  OP(ShrUI64, "shr.u.i64", "III", 0)                  \
  OP(MinSI64, "min.s.i64", "III", 0)                  \
  OP(MaxSI64, "max.s.i64", "III", 0)                  \
  OP(NotI64, "not.i64", "II", 0)                      \
  OP(NegI64, "neg.i64", "II", 0)                      \
  OP(AbsI64, "abs.i64", "II", 0)                      \
  /* f32 / f64 arithmetic (IEEE) */                   \
  OP(AddF32, "add.f32", "fff", 0)                     \
  OP(SubF32, "sub.f32", "fff", 0)                     \
  OP(MulF32, "mul.f32", "fff", 0)                     \
  OP(DivF32, "div.f32", "fff", 0)                     \
  OP(RemF32, "rem.f32", "fff", 0)                     \
  OP(MinF32, "min.f32", "fff", 0)                     \
  OP(MaxF32, "max.f32", "fff", 0)                     \
  OP(NegF32, "neg.f32", "ff", 0)                      \
  OP(AbsF32, "abs.f32", "ff", 0)                      \
  OP(SqrtF32, "sqrt.f32", "ff", 0)                    \
  OP(FloorF32, "floor.f32", "ff", 0)                  \
  OP(CeilF32, "ceil.f32", "ff", 0)                    \
  OP(AddF64, "add.f64", "FFF", 0)                     \
  OP(SubF64, "sub.f64", "FFF", 0)                     \
  OP(MulF64, "mul.f64", "FFF", 0)                     \
  OP(DivF64, "div.f64", "FFF", 0)                     \
  OP(RemF64, "rem.f64", "FFF", 0)                     \
  OP(MinF64, "min.f64", "FFF", 0)                     \
  OP(MaxF64, "max.f64", "FFF", 0)                     \
  OP(NegF64, "neg.f64", "FF", 0)                      \
  OP(AbsF64, "abs.f64", "FF", 0)                      \
  OP(SqrtF64, "sqrt.f64", "FF", 0)                    \
  OP(FloorF64, "floor.f64", "FF", 0)                  \
  OP(CeilF64, "ceil.f64", "FF", 0)                    \
  /* comparisons produce i32 0/1 */                   \
  OP(CmpEqI32, "cmp.eq.i32", "iii", 0)                \
  OP(CmpNeI32, "cmp.ne.i32", "iii", 0)                \
  OP(CmpLtSI32, "cmp.lt.s.i32", "iii", 0)             \
  OP(CmpLeSI32, "cmp.le.s.i32", "iii", 0)             \
  OP(CmpLtUI32, "cmp.lt.u.i32", "iii", 0)             \
  OP(CmpLeUI32, "cmp.le.u.i32", "iii", 0)             \
  OP(CmpNzI32, "cmp.nz.i32", "ii", 0)                 \
  OP(CmpEqI64, "cmp.eq.i64", "iII", 0)                \
  OP(CmpNeI64, "cmp.ne.i64", "iII", 0)                \
  OP(CmpLtSI64, "cmp.lt.s.i64", "iII", 0)             \
  OP(CmpLeSI64, "cmp.le.s.i64", "iII", 0)             \
  OP(CmpLtUI64, "cmp.lt.u.i64", "iII", 0)             \
  OP(CmpLeUI64, "cmp.le.u.i64", "iII", 0)             \
  OP(CmpNzI64, "cmp.nz.i64", "iI", 0)                 \
  OP(CmpEqF32, "cmp.eq.f32", "iff", 0)                \
  OP(CmpNeF32, "cmp.ne.f32", "iff", 0)                \
  OP(CmpLtF32, "cmp.lt.f32", "iff", 0)                \
  OP(CmpLeF32, "cmp.le.f32", "iff", 0)                \
  OP(CmpNanF32, "cmp.nan.f32", "if", 0)               \
  OP(CmpEqF64, "cmp.eq.f64", "iFF", 0)                \
  OP(CmpNeF64, "cmp.ne.f64", "iFF", 0)                \
  OP(CmpLtF64, "cmp.lt.f64", "iFF", 0)                \
  OP(CmpLeF64, "cmp.le.f64", "iFF", 0)                \
  OP(CmpNanF64, "cmp.nan.f64", "iF", 0)               \
  OP(CmpEqRef, "cmp.eq.ref", "irr", 0)                \
  OP(CmpNzRef, "cmp.nz.ref", "ir", 0)                 \
  /* conversions (float->int saturates, NaN -> 0) */  \
  OP(ExtI32I64S, "ext.i32.i64.s", "Ii", 0)            \
  OP(ExtI32I64U, "ext.i32.i64.u", "Ii", 0)            \
  OP(TruncI64I32, "trunc.i64.i32", "iI", 0)           \
  OP(TruncI32I8, "trunc.i32.i8", "ii", 0)             \
  OP(TruncI32I16, "trunc.i32.i16", "ii", 0)           \
  OP(ExtI8I32S, "ext.i8.i32.s", "ii", 0)              \
  OP(ExtI16I32S, "ext.i16.i32.s", "ii", 0)            \
  OP(CvtSI32F32, "cvt.si32.f32", "fi", 0)             \
  OP(CvtUI32F32, "cvt.ui32.f32", "fi", 0)             \
  OP(CvtF32SI32, "cvt.f32.si32", "if", 0)             \
  OP(CvtSI32F64, "cvt.si32.f64", "Fi", 0)             \
  OP(CvtF64SI32, "cvt.f64.si32", "iF", 0)             \
  OP(CvtSI64F32, "cvt.si64.f32", "fI", 0)             \
  OP(CvtF32SI64, "cvt.f32.si64", "If", 0)             \
  OP(CvtSI64F64, "cvt.si64.f64", "FI", 0)             \
  OP(CvtF64SI64, "cvt.f64.si64", "IF", 0)             \
  OP(ExtF32F64, "ext.f32.f64", "Ff", 0)               \
  OP(TruncF64F32, "trunc.f64.f32", "fF", 0)           \
  OP(BitcastI32F32, "bitcast.i32.f32", "fi", 0)       \
  OP(BitcastF32I32, "bitcast.f32.i32", "if", 0)       \
  OP(BitcastI64F64, "bitcast.i64.f64", "FI", 0)       \
  OP(BitcastF64I64, "bitcast.f64.i64", "IF", 0)       \
  /* lists: alloc dst, capacity; get dst, list, index; set list, index, value */ \
  OP(ListAlloc, "list.alloc", "ri", 0)                \
  OP(ListSize, "list.size", "ir", 0)                  \
  OP(ListResize, "list.resize", "ri", 0)              \
  OP(ListGetI32, "list.get.i32", "iri", 0)            \
  OP(ListSetI32, "list.set.i32", "rii", 0)            \
  OP(ListGetI64, "list.get.i64", "Iri", 0)            \
  OP(ListSetI64, "list.set.i64", "riI", 0)            \
  OP(ListGetF32, "list.get.f32", "fri", 0)            \
  OP(ListSetF32, "list.set.f32", "rif", 0)            \
  OP(ListGetF64, "list.get.f64", "Fri", 0)            \
  OP(ListSetF64, "list.set.f64", "riF", 0)            \
  OP(ListGetRef, "list.get.ref", "rri", 0)            \
  OP(ListSetRef, "list.set.ref", "rir", 0)            \
  /* buffers: byte offsets and lengths are i64 */     \
  OP(BufferAlloc, "buffer.alloc", "rI", 0)            \
  OP(BufferLength, "buffer.length", "Ir", 0)          \
  OP(BufferClone, "buffer.clone", "rr", 0)            \
  OP(BufferLoadU8, "buffer.load.u8", "irI", 0)        \
  OP(BufferLoadI32, "buffer.load.i32", "irI", 0)      \
  OP(BufferLoadI64, "buffer.load.i64", "IrI", 0)      \
  OP(BufferLoadF32, "buffer.load.f32", "frI", 0)      \
  OP(BufferLoadF64, "buffer.load.f64", "FrI", 0)      \
  OP(BufferStoreI8, "buffer.store.i8", "rIi", 0)      \
  OP(BufferStoreI32, "buffer.store.i32", "rIi", 0)    \
  OP(BufferStoreI64, "buffer.store.i64", "rII", 0)    \
  OP(BufferStoreF32, "buffer.store.f32", "rIf", 0)    \
  OP(BufferStoreF64, "buffer.store.f64", "rIF", 0)    \
  OP(BufferFillI8, "buffer.fill.i8", "rIIi", 0)       \
  OP(BufferCopy, "buffer.copy", "rIrII", 0)          \
  /* globals (format v2; appended so v1 opcode numbers stay) */ \
  OP(GlobalLoadI32, "global.load.i32", "ig", 0)       \
  OP(GlobalLoadI64, "global.load.i64", "Ig", 0)       \
  OP(GlobalLoadF32, "global.load.f32", "fg", 0)       \
  OP(GlobalLoadF64, "global.load.f64", "Fg", 0)       \
  OP(GlobalLoadRef, "global.load.ref", "rg", 0)       \
  OP(GlobalStoreI32, "global.store.i32", "gi", 0)     \
  OP(GlobalStoreI64, "global.store.i64", "gI", 0)     \
  OP(GlobalStoreF32, "global.store.f32", "gf", 0)     \
  OP(GlobalStoreF64, "global.store.f64", "gF", 0)     \
  OP(GlobalStoreRef, "global.store.ref", "gr", 0)

namespace graphrt {
namespace vm {

enum class Op : uint8_t {
#define GRAPHRT_VM_OP_ENUM(id, mnemonic, operands, flags) id,
  GRAPHRT_VM_OPCODES(GRAPHRT_VM_OP_ENUM)
#undef GRAPHRT_VM_OP_ENUM
      kCount
};

constexpr int kOpcodeCount = static_cast<int>(Op::kCount);
constexpr uint32_t kImportBit = 0x80000000u;

struct OpInfo {
  const char* mnemonic;
  const char* operands;
  bool terminator;
};

// nullptr for a byte that is no opcode.
const OpInfo* op_info(uint8_t opcode);
// -1 when unknown.
int opcode_from_mnemonic(const std::string& mnemonic);

}  // namespace vm
}  // namespace graphrt
