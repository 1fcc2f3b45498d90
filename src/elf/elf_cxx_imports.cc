#include "elf_cxx_imports.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>

namespace graphrt {
namespace elf {

namespace {

// Imports of TVM's ccompiler output (string building, ostringstream for error
// messages, exceptions, static-init guards) and the allocation operators.
const std::set<std::string>& cxx_names() {
  static const std::set<std::string> names = {
      // allocation operators: plain, sized, array, nothrow, aligned
      "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
      "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
      "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
      // C++ ABI: exceptions, static-init guards, pure virtuals, unwinding
      "__cxa_allocate_exception", "__cxa_free_exception", "__cxa_throw", "__cxa_begin_catch", "__cxa_end_catch",
      "__cxa_rethrow", "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort", "__cxa_pure_virtual",
      "__cxa_throw_bad_array_new_length", "__gxx_personality_v0", "_Unwind_Resume",
      "_ZTIN10__cxxabiv115__forced_unwindE", "_ZTVN10__cxxabiv120__si_class_type_infoE",
      "_ZTVN10__cxxabiv117__class_type_infoE", "_ZTISt9exception", "_ZTISt13runtime_error",
      "_ZNKSt13runtime_error4whatEv", "_ZNSt13runtime_errorC2EOS_",
      "_ZNSt13runtime_errorC2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", "_ZNSt13runtime_errorD2Ev",
      "_ZSt19__throw_logic_errorPKc", "_ZSt20__throw_length_errorPKc", "_ZSt17__throw_bad_allocv",
      // std::string
      "_ZNSaIcEC1Ev", "_ZNSaIcED1Ev", "_ZNSaIcED2Ev",
      "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv",
      "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE5c_strEv",
      "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7_M_dataEv",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE10_M_disposeEv",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE11_M_capacityEm",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE12_Alloc_hiderC1EPcRKS3_",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE13_M_local_dataEv",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE13_M_set_lengthEm",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE13_S_copy_charsEPcPKcS7_",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4dataEv",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6insertEmPKc",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7_M_dataEPc",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC1EOS4_",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC1ERKS4_",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC1Ev",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEED1Ev",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEaSEOS4_",
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEaSEPKc",
      // std::ostringstream and the stream operators error messages use
      "_ZNKSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEE3strEv",
      "_ZNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEE3strERKNS_12basic_stringIcS2_S3_EE",
      "_ZNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEEC1Ev",
      "_ZNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEED1Ev",
      "_ZNKSo6sentrycvbEv", "_ZNSo6sentryC1ERSo", "_ZNSo6sentryD1Ev", "_ZNSo5writeEPKcl", "_ZNSolsEPFRSoS_E",
      "_ZNSolsEi", "_ZNSolsEl", "_ZNSolsEm", "_ZNSolsEj", "_ZNSolsEd", "_ZNSolsEf",
      "_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_",
      "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
      "_ZStlsIcSt11char_traitsIcESaIcEERSt13basic_ostreamIT_T0_ES7_RKNSt7__cxx1112basic_stringIS4_S5_T1_EE",
      "_ZNKSt9basic_iosIcSt11char_traitsIcEE4fillEv", "_ZNKSt9basic_iosIcSt11char_traitsIcEE5rdbufEv",
      "_ZNSt9basic_iosIcSt11char_traitsIcEE11_M_setstateESt12_Ios_Iostate",
      "_ZNSt9basic_iosIcSt11char_traitsIcEE8setstateESt12_Ios_Iostate",
      "_ZNSt8ios_base4InitC1Ev", "_ZNSt8ios_base4InitD1Ev", "_ZNSt6localeC1ERKS_", "_ZNSt6localeD1Ev",
      "_ZNKSt8time_putIcSt19ostreambuf_iteratorIcSt11char_traitsIcEEE3putES3_RSt8ios_basecPK2tmPKcSB_",
      "_ZSt9use_facetISt8time_putIcSt19ostreambuf_iteratorIcSt11char_traitsIcEEEERKT_RKSt6locale",
      // time stamps in TVM's log messages
      "time", "localtime",
      // graphrt's implementation of TVM's object ABI (src/abi/tvm_object_abi.cc)
      "_ZN3tvm7runtime6Object13TypeIndex2KeyB5cxx11Ej",
      "_ZN3tvm7runtime6Object26GetOrAllocRuntimeTypeIndexERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEjjjb",
      "_ZN3tvm7runtime6detail8LogFatal8GetEntryEv", "_ZN3tvm7runtime6detail8LogFatal5EntryD1Ev",
      "_ZN3tvm7runtime6detail8LogFatal5EntryD2Ev", "_ZN3tvm7runtime9BacktraceB5cxx11Ev",
      "_ZNK3tvm7runtime6Object11DerivedFromEj",
  };
  return names;
}

// The library this code is part of (libgraphrt, or the executable that links
// the loader statically): its lookup scope holds libstdc++ and the TVM ABI.
void* own_scope() {
  static void* handle = [] {
    Dl_info info{};
    void* h = nullptr;
    if (dladdr(reinterpret_cast<void*>(&cxx_allowlist_symbol), &info) && info.dli_fname && info.dli_fname[0])
      h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    return h ? h : RTLD_DEFAULT;
  }();
  return handle;
}

struct AtexitEntry {
  void (*fn)(void*);
  void* arg;
  uintptr_t dso;
};
struct AtexitList {
  std::mutex mutex;
  std::vector<AtexitEntry> entries;
};
// Process-wide, not the Runtime's: the __cxa_atexit registrations of linked
// images are the C++ ABI's per-process state, run at any time.
AtexitList& atexit_list() {
  static AtexitList* list = new AtexitList();  // used by image destructors at any time
  return *list;
}

}  // namespace

void* cxx_allowlist_symbol(const std::string& name) {
  if (name == "__cxa_atexit") return reinterpret_cast<void*>(&graphrt_elf_cxa_atexit);
  if (cxx_names().count(name) == 0) return nullptr;
  return dlsym(own_scope(), name.c_str());
}

std::vector<std::string> cxx_allowlist_names() {
  std::vector<std::string> names(cxx_names().begin(), cxx_names().end());
  names.push_back("__cxa_atexit");
  return names;
}

extern "C" int graphrt_elf_cxa_atexit(void (*fn)(void*), void* arg, void* dso_handle) {
  AtexitList& list = atexit_list();
  std::lock_guard<std::mutex> lock(list.mutex);
  list.entries.push_back(AtexitEntry{fn, arg, reinterpret_cast<uintptr_t>(dso_handle)});
  return 0;
}

void run_image_atexit(const void* begin, size_t size) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(begin);
  std::vector<AtexitEntry> mine;
  {
    AtexitList& list = atexit_list();
    std::lock_guard<std::mutex> lock(list.mutex);
    auto in_image = [&](const AtexitEntry& e) { return e.dso >= lo && e.dso - lo < size; };
    for (const AtexitEntry& e : list.entries)
      if (in_image(e)) mine.push_back(e);
    list.entries.erase(std::remove_if(list.entries.begin(), list.entries.end(), in_image), list.entries.end());
  }
  for (auto it = mine.rbegin(); it != mine.rend(); ++it) it->fn(it->arg);
}

}  // namespace elf
}  // namespace graphrt
