// The float16/bfloat16 conversion helpers generated code calls.
//
// Which names and which registers, on x86_64 (checked with the compilers):
//  - LLVM <= 14 (TVM v0.16-v0.18 builds, the fixtures) lowers half
//    conversions to __gnu_h2f_ieee / __gnu_f2h_ieee and __truncdfhf2 with the
//    half in an integer register: argument in %di, result in %ax. TVM's own
//    runtime exports exactly these three with that ABI.
//  - LLVM >= 15 and GCC >= 12 use __extendhfsf2 / __truncsfhf2 /
//    __truncdfhf2 / __extendhfdf2 / __truncxfhf2 (and GCC >= 13, LLVM >= 17
//    the bfloat16 ones) with the value in %xmm0 (the _Float16/__bf16 ABI).
// __truncdfhf2 is emitted under both conventions, and libgcc_s defines it
// with the %xmm0 one only. So every helper here that returns a half or a
// bfloat16 returns it in %ax AND in %xmm0 (both are caller-clobbered return
// registers), which serves callers of either era. An argument cannot be
// read both ways: __gnu_h2f_ieee takes it in %di (the only convention that
// name is emitted with on x86_64), the __extend* names in %xmm0.
// The shims are in assembly because C++ has no return type that fills both
// registers; the arithmetic is the portable C++ of src/float16.cc.
#include "abi/float16_abi.h"

#include <cstdint>

#include "graphrt/float16.h"

#define GRAPHRT_HIDDEN extern "C" __attribute__((visibility("hidden")))

GRAPHRT_HIDDEN uint16_t graphrt_f16_from_f32(float v) { return graphrt::float16_from_float(v); }
GRAPHRT_HIDDEN uint16_t graphrt_f16_from_f64(double v) { return graphrt::float16_from_double(v); }
GRAPHRT_HIDDEN uint16_t graphrt_f16_from_x87(const void* v) { return graphrt::float16_from_x87(v); }
GRAPHRT_HIDDEN uint16_t graphrt_bf16_from_f32(float v) { return graphrt::bfloat16_from_float(v); }
GRAPHRT_HIDDEN uint16_t graphrt_bf16_from_f64(double v) { return graphrt::bfloat16_from_double(v); }
GRAPHRT_HIDDEN uint16_t graphrt_bf16_from_x87(const void* v) { return graphrt::bfloat16_from_x87(v); }
GRAPHRT_HIDDEN float graphrt_f32_from_f16(uint16_t h) { return graphrt::float16_to_float(h); }
GRAPHRT_HIDDEN double graphrt_f64_from_f16(uint16_t h) { return graphrt::float16_to_float(h); }
GRAPHRT_HIDDEN long double graphrt_x87_from_f16(uint16_t h) { return graphrt::float16_to_float(h); }
GRAPHRT_HIDDEN float graphrt_f32_from_bf16(uint16_t h) { return graphrt::bfloat16_to_float(h); }

#if defined(__x86_64__)

// Each exported helper also gets a hidden alias (graphrt_abi_<name>) so the
// ELF loader's table points at this definition even when another library
// defining the same name comes first in the global scope.
asm(R"(
  .text
  .macro GRAPHRT_ENTRY name
    .globl \name
    .type \name, @function
    .globl graphrt_abi_\name
    .hidden graphrt_abi_\name
    .type graphrt_abi_\name, @function
    .p2align 4
  \name:
  graphrt_abi_\name:
  .endm

  # float or double in %xmm0 (or, with x87=1, a long double on the stack,
  # passed to the impl by address) -> half/bfloat16 in %ax and %xmm0.
  .macro GRAPHRT_NARROW name, impl, x87=0
    GRAPHRT_ENTRY \name
    .cfi_startproc
    .if \x87
    leaq 8(%rsp), %rdi
    .endif
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    call \impl@PLT
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    movzwl %ax, %eax
    movd %eax, %xmm0
    ret
    .cfi_endproc
    .size \name, . - \name
  .endm

  # half/bfloat16 in %xmm0 -> the impl's result (it takes the bits in %di).
  .macro GRAPHRT_WIDEN name, impl
    GRAPHRT_ENTRY \name
    .cfi_startproc
    movd %xmm0, %edi
    movzwl %di, %edi
    jmp \impl@PLT
    .cfi_endproc
    .size \name, . - \name
  .endm

  # half in %di -> float in %xmm0.
  .macro GRAPHRT_WIDEN_FROM_INT name, impl
    GRAPHRT_ENTRY \name
    .cfi_startproc
    movzwl %di, %edi
    jmp \impl@PLT
    .cfi_endproc
    .size \name, . - \name
  .endm

  GRAPHRT_WIDEN_FROM_INT __gnu_h2f_ieee, graphrt_f32_from_f16
  GRAPHRT_NARROW __gnu_f2h_ieee, graphrt_f16_from_f32
  GRAPHRT_NARROW __truncsfhf2, graphrt_f16_from_f32
  GRAPHRT_NARROW __truncdfhf2, graphrt_f16_from_f64
  GRAPHRT_NARROW __truncxfhf2, graphrt_f16_from_x87, 1
  GRAPHRT_WIDEN __extendhfsf2, graphrt_f32_from_f16
  GRAPHRT_WIDEN __extendhfdf2, graphrt_f64_from_f16
  GRAPHRT_WIDEN __extendhfxf2, graphrt_x87_from_f16
  GRAPHRT_NARROW __truncsfbf2, graphrt_bf16_from_f32
  GRAPHRT_NARROW __truncdfbf2, graphrt_bf16_from_f64
  GRAPHRT_NARROW __truncxfbf2, graphrt_bf16_from_x87, 1
  GRAPHRT_WIDEN __extendbfsf2, graphrt_f32_from_bf16
)");

#define GRAPHRT_DECLARE(name) extern "C" void graphrt_abi_##name();
GRAPHRT_DECLARE(__gnu_h2f_ieee)
GRAPHRT_DECLARE(__gnu_f2h_ieee)
GRAPHRT_DECLARE(__truncsfhf2)
GRAPHRT_DECLARE(__truncdfhf2)
GRAPHRT_DECLARE(__truncxfhf2)
GRAPHRT_DECLARE(__extendhfsf2)
GRAPHRT_DECLARE(__extendhfdf2)
GRAPHRT_DECLARE(__extendhfxf2)
GRAPHRT_DECLARE(__truncsfbf2)
GRAPHRT_DECLARE(__truncdfbf2)
GRAPHRT_DECLARE(__truncxfbf2)
GRAPHRT_DECLARE(__extendbfsf2)
#undef GRAPHRT_DECLARE

#else  // not x86_64: one register class per type, the integer ABI TVM's runtime uses.

#define GRAPHRT_DEFINE(ret, name, arg, impl) \
  extern "C" GRAPHRT_API ret name(arg v) { return impl(v); }
GRAPHRT_DEFINE(float, __gnu_h2f_ieee, uint16_t, graphrt_f32_from_f16)
GRAPHRT_DEFINE(uint16_t, __gnu_f2h_ieee, float, graphrt_f16_from_f32)
GRAPHRT_DEFINE(uint16_t, __truncsfhf2, float, graphrt_f16_from_f32)
GRAPHRT_DEFINE(uint16_t, __truncdfhf2, double, graphrt_f16_from_f64)
GRAPHRT_DEFINE(float, __extendhfsf2, uint16_t, graphrt_f32_from_f16)
GRAPHRT_DEFINE(double, __extendhfdf2, uint16_t, graphrt_f64_from_f16)
GRAPHRT_DEFINE(uint16_t, __truncsfbf2, float, graphrt_bf16_from_f32)
GRAPHRT_DEFINE(uint16_t, __truncdfbf2, double, graphrt_bf16_from_f64)
GRAPHRT_DEFINE(float, __extendbfsf2, uint16_t, graphrt_f32_from_bf16)
#undef GRAPHRT_DEFINE

#endif

namespace graphrt {

const std::vector<std::pair<std::string, void*>>& float16_abi_symbols() {
#if defined(__x86_64__)
#define GRAPHRT_SYMBOL(name) {#name, reinterpret_cast<void*>(&graphrt_abi_##name)}
#else
#define GRAPHRT_SYMBOL(name) {#name, reinterpret_cast<void*>(&name)}
#endif
  static const std::vector<std::pair<std::string, void*>> symbols = {
      GRAPHRT_SYMBOL(__gnu_h2f_ieee), GRAPHRT_SYMBOL(__gnu_f2h_ieee), GRAPHRT_SYMBOL(__truncsfhf2),
      GRAPHRT_SYMBOL(__truncdfhf2),   GRAPHRT_SYMBOL(__extendhfsf2),  GRAPHRT_SYMBOL(__extendhfdf2),
      GRAPHRT_SYMBOL(__truncsfbf2),   GRAPHRT_SYMBOL(__truncdfbf2),   GRAPHRT_SYMBOL(__extendbfsf2),
#if defined(__x86_64__)
      GRAPHRT_SYMBOL(__truncxfhf2),   GRAPHRT_SYMBOL(__extendhfxf2),  GRAPHRT_SYMBOL(__truncxfbf2),
#endif
  };
#undef GRAPHRT_SYMBOL
  return symbols;
}

}  // namespace graphrt
