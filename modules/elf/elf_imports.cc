#include "elf_imports.h"

#include <elf.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "graphrt/error.h"

namespace graphrt {
namespace elf {

extern "C" uint16_t graphrt_elf_truncsfhf2(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
  const int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to infinity
  if (e <= 0) {                                                  // half subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;  // round to nearest even
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // a carry may round up to inf: correct
  return static_cast<uint16_t>(sign | half);
}

extern "C" float graphrt_elf_extendhfsf2(uint16_t value) {
  const uint32_t sign = static_cast<uint32_t>(value & 0x8000u) << 16;
  const uint32_t exp = (value >> 10) & 0x1fu;
  const uint32_t mant = value & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mant), -24);
    std::memcpy(&bits, &magnitude, sizeof(bits));
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

namespace {

using F1 = float (*)(float);
using F2 = float (*)(float, float);
using D1 = double (*)(double);
using D2 = double (*)(double, double);

// Function pointers become void* only at this boundary (conditionally
// supported by C++, fine on every ELF platform).
template <typename Fn>
void* addr(Fn fn) {
  return reinterpret_cast<void*>(fn);
}

const std::map<std::string, void*>& allowlist() {
  static const std::map<std::string, void*> table = {
      // memory and strings
      {"memcpy", addr(&::memcpy)}, {"memmove", addr(&::memmove)}, {"memset", addr(&::memset)},
      {"memcmp", addr(&::memcmp)}, {"strlen", addr(&::strlen)}, {"strcmp", addr(&::strcmp)},
      {"malloc", addr(&::malloc)}, {"calloc", addr(&::calloc)}, {"realloc", addr(&::realloc)},
      {"free", addr(&::free)}, {"posix_memalign", addr(&::posix_memalign)}, {"abort", addr(&::abort)},
      // libm, float
      {"expf", addr(static_cast<F1>(&::expf))}, {"exp2f", addr(static_cast<F1>(&::exp2f))},
      {"logf", addr(static_cast<F1>(&::logf))}, {"log2f", addr(static_cast<F1>(&::log2f))},
      {"log10f", addr(static_cast<F1>(&::log10f))}, {"log1pf", addr(static_cast<F1>(&::log1pf))},
      {"powf", addr(static_cast<F2>(&::powf))}, {"sqrtf", addr(static_cast<F1>(&::sqrtf))},
      {"tanhf", addr(static_cast<F1>(&::tanhf))}, {"sinf", addr(static_cast<F1>(&::sinf))},
      {"cosf", addr(static_cast<F1>(&::cosf))}, {"tanf", addr(static_cast<F1>(&::tanf))},
      {"atanf", addr(static_cast<F1>(&::atanf))}, {"atan2f", addr(static_cast<F2>(&::atan2f))},
      {"erff", addr(static_cast<F1>(&::erff))}, {"fabsf", addr(static_cast<F1>(&::fabsf))},
      {"floorf", addr(static_cast<F1>(&::floorf))}, {"ceilf", addr(static_cast<F1>(&::ceilf))},
      {"roundf", addr(static_cast<F1>(&::roundf))}, {"truncf", addr(static_cast<F1>(&::truncf))},
      {"nearbyintf", addr(static_cast<F1>(&::nearbyintf))}, {"fmodf", addr(static_cast<F2>(&::fmodf))},
      {"fmaxf", addr(static_cast<F2>(&::fmaxf))}, {"fminf", addr(static_cast<F2>(&::fminf))},
      // libm, double
      {"exp", addr(static_cast<D1>(&::exp))}, {"log", addr(static_cast<D1>(&::log))},
      {"pow", addr(static_cast<D2>(&::pow))}, {"sqrt", addr(static_cast<D1>(&::sqrt))},
      {"tanh", addr(static_cast<D1>(&::tanh))}, {"erf", addr(static_cast<D1>(&::erf))},
      {"floor", addr(static_cast<D1>(&::floor))}, {"ceil", addr(static_cast<D1>(&::ceil))},
      {"round", addr(static_cast<D1>(&::round))}, {"fmax", addr(static_cast<D2>(&::fmax))},
      {"fmin", addr(static_cast<D2>(&::fmin))}, {"fabs", addr(static_cast<D1>(&::fabs))},
      // compiler-rt half conversions (our own implementations)
      {"__truncsfhf2", addr(&graphrt_elf_truncsfhf2)}, {"__gnu_f2h_ieee", addr(&graphrt_elf_truncsfhf2)},
      {"__extendhfsf2", addr(&graphrt_elf_extendhfsf2)}, {"__gnu_h2f_ieee", addr(&graphrt_elf_extendhfsf2)},
  };
  return table;
}

}  // namespace

void* libc_allowlist_symbol(const std::string& name) {
  const auto& table = allowlist();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

std::vector<std::string> libc_allowlist_names() {
  std::vector<std::string> names;
  for (const auto& entry : allowlist()) names.push_back(entry.first);
  return names;
}

std::vector<uint64_t> resolve_symbols(const SymbolTable& symbols, uint64_t bias, const ImportResolver& imports) {
  std::vector<uint64_t> values(symbols.count(), 0);
  for (size_t i = 1; i < symbols.count(); ++i) {
    const Elf64_Sym sym = symbols.symbol(i);
    if (sym.st_shndx == SHN_ABS) {
      values[i] = sym.st_value;
    } else if (sym.st_shndx != SHN_UNDEF) {
      values[i] = bias + sym.st_value;
    } else if (sym.st_name != 0) {
      const std::string name = symbols.name(sym);
      void* p = imports ? imports(name) : nullptr;
      // An unresolved weak reference is legal and reads as 0 (crtstuff's
      // __gmon_start__, __cxa_finalize and _ITM_* rely on exactly that).
      if (p == nullptr && ELF64_ST_BIND(sym.st_info) != STB_WEAK)
        throw Error("image imports a symbol that is not in the import table").with("symbol", name);
      values[i] = reinterpret_cast<uint64_t>(p);
    }
  }
  return values;
}

std::vector<std::string> imported_names(const SymbolTable& symbols) {
  std::vector<std::string> names;
  for (size_t i = 1; i < symbols.count(); ++i) {
    const Elf64_Sym sym = symbols.symbol(i);
    if (sym.st_shndx == SHN_UNDEF && sym.st_name != 0) names.push_back(symbols.name(sym));
  }
  return names;
}

}  // namespace elf
}  // namespace graphrt
