#include "elf_imports.h"

#include <elf.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "elf_cxx_imports.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

namespace {

using F1 = float (*)(float);
using F2 = float (*)(float, float);
using D1 = double (*)(double);
using D2 = double (*)(double, double);
using F3 = float (*)(float, float, float);
using D3 = double (*)(double, double, double);

// LLVM's libcalls for llvm.powi (an integer power), which libgcc and
// compiler-rt provide and a linked image may still import: square and
// multiply, then one reciprocal for a negative power.
template <typename T>
T integer_power(T base, int exponent) {
  unsigned n = exponent < 0 ? 0u - static_cast<unsigned>(exponent) : static_cast<unsigned>(exponent);
  T result = (n & 1u) ? base : T(1);
  while (n >>= 1) {
    base *= base;
    if (n & 1u) result *= base;
  }
  return exponent < 0 ? T(1) / result : result;
}
float powisf2(float base, int exponent) { return integer_power(base, exponent); }
double powidf2(double base, int exponent) { return integer_power(base, exponent); }

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
      // libm, the rest of what TVM's intrinsics and LLVM's libcalls reach
      {"sinhf", addr(static_cast<F1>(&::sinhf))}, {"coshf", addr(static_cast<F1>(&::coshf))},
      {"asinf", addr(static_cast<F1>(&::asinf))}, {"acosf", addr(static_cast<F1>(&::acosf))},
      {"asinhf", addr(static_cast<F1>(&::asinhf))}, {"acoshf", addr(static_cast<F1>(&::acoshf))},
      {"atanhf", addr(static_cast<F1>(&::atanhf))}, {"expm1f", addr(static_cast<F1>(&::expm1f))},
      {"exp10f", addr(static_cast<F1>(&::exp10f))}, {"cbrtf", addr(static_cast<F1>(&::cbrtf))},
      {"erfcf", addr(static_cast<F1>(&::erfcf))}, {"rintf", addr(static_cast<F1>(&::rintf))},
      {"hypotf", addr(static_cast<F2>(&::hypotf))}, {"copysignf", addr(static_cast<F2>(&::copysignf))},
      {"fmaf", addr(static_cast<F3>(&::fmaf))}, {"ldexpf", addr(static_cast<float (*)(float, int)>(&::ldexpf))},
      {"sincosf", addr(static_cast<void (*)(float, float*, float*)>(&::sincosf))},
      {"exp2", addr(static_cast<D1>(&::exp2))}, {"log2", addr(static_cast<D1>(&::log2))},
      {"log10", addr(static_cast<D1>(&::log10))}, {"log1p", addr(static_cast<D1>(&::log1p))},
      {"expm1", addr(static_cast<D1>(&::expm1))}, {"exp10", addr(static_cast<D1>(&::exp10))},
      {"sin", addr(static_cast<D1>(&::sin))}, {"cos", addr(static_cast<D1>(&::cos))},
      {"tan", addr(static_cast<D1>(&::tan))}, {"asin", addr(static_cast<D1>(&::asin))},
      {"acos", addr(static_cast<D1>(&::acos))}, {"atan", addr(static_cast<D1>(&::atan))},
      {"atan2", addr(static_cast<D2>(&::atan2))}, {"sinh", addr(static_cast<D1>(&::sinh))},
      {"cosh", addr(static_cast<D1>(&::cosh))}, {"asinh", addr(static_cast<D1>(&::asinh))},
      {"acosh", addr(static_cast<D1>(&::acosh))}, {"atanh", addr(static_cast<D1>(&::atanh))},
      {"trunc", addr(static_cast<D1>(&::trunc))}, {"nearbyint", addr(static_cast<D1>(&::nearbyint))},
      {"rint", addr(static_cast<D1>(&::rint))}, {"fmod", addr(static_cast<D2>(&::fmod))},
      {"hypot", addr(static_cast<D2>(&::hypot))}, {"copysign", addr(static_cast<D2>(&::copysign))},
      {"cbrt", addr(static_cast<D1>(&::cbrt))}, {"erfc", addr(static_cast<D1>(&::erfc))},
      {"fma", addr(static_cast<D3>(&::fma))}, {"ldexp", addr(static_cast<double (*)(double, int)>(&::ldexp))},
      {"sincos", addr(static_cast<void (*)(double, double*, double*)>(&::sincos))},
      {"__powisf2", addr(&powisf2)}, {"__powidf2", addr(&powidf2)},
      // libm, double
      {"exp", addr(static_cast<D1>(&::exp))}, {"log", addr(static_cast<D1>(&::log))},
      {"pow", addr(static_cast<D2>(&::pow))}, {"sqrt", addr(static_cast<D1>(&::sqrt))},
      {"tanh", addr(static_cast<D1>(&::tanh))}, {"erf", addr(static_cast<D1>(&::erf))},
      {"floor", addr(static_cast<D1>(&::floor))}, {"ceil", addr(static_cast<D1>(&::ceil))},
      {"round", addr(static_cast<D1>(&::round))}, {"fmax", addr(static_cast<D2>(&::fmax))},
      {"fmin", addr(static_cast<D2>(&::fmin))}, {"fabs", addr(static_cast<D1>(&::fabs))},
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
  std::vector<std::string> missing;
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
      if (p == nullptr && ELF64_ST_BIND(sym.st_info) != STB_WEAK) missing.push_back(name);
      values[i] = reinterpret_cast<uint64_t>(p);
    }
  }
  if (!missing.empty()) {
    // All of them at once: the user sees the whole gap, not one name per try.
    std::string names;
    for (const std::string& n : missing) names += (names.empty() ? "" : ", ") + n;
    // C++ code (mangled _Z names: libstdc++, operator new) needs the system loader: say so.
    bool cxx = false;
    for (const std::string& n : missing) cxx |= n.compare(0, 2, "_Z") == 0 || n.compare(0, 6, "__cxa_") == 0;
    Error error(ErrorKind::kNotFound, "image imports " + std::string(missing.size() == 1 ? "a symbol" : "symbols") +
                " that the runtime does not provide: " + names +
                (cxx ? " (C++ runtime symbols outside the ELF loader's allow-list of what TVM's C and C++ codegen "
                       "import; load this library with the default dlopen loader)"
                     : " (the ELF loader resolves only graphrt's TVM ABI and a libc/libm allow-list; the default "
                       "dlopen loader resolves every import)"));
    error.with("symbol", missing.front());
    if (cxx) error.with("option", "loader=dlopen");
    throw error;
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

ImportResolver tvm_import_resolver(void* (*runtime_symbol)(const std::string& name)) {
  return [runtime_symbol](const std::string& name) -> void* {
    if (void* p = runtime_symbol(name)) return p;
    if (void* p = libc_allowlist_symbol(name)) return p;
    return cxx_allowlist_symbol(name);
  };
}

}  // namespace elf
}  // namespace graphrt
