// Test-side helpers: an independent, minimal reader for ELF64 files (used to
// locate fields to corrupt and to cross-check the loader), and import tables.
#pragma once

#include <dlfcn.h>
#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "src/elf/elf_imports.h"
#include "src/elf/elf_types.h"
#include "test_support.h"

namespace elf_test {

template <typename T>
T get(const std::vector<uint8_t>& b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}
template <typename T>
void put(std::vector<uint8_t>& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof(T));
}

// File offset of the i-th program header / of the header of a given type.
inline size_t phdr_offset(const std::vector<uint8_t>& b, size_t i) {
  return get<Elf64_Ehdr>(b, 0).e_phoff + i * sizeof(Elf64_Phdr);
}
inline int find_phdr(const std::vector<uint8_t>& b, uint32_t type, int nth = 0) {
  const Elf64_Ehdr eh = get<Elf64_Ehdr>(b, 0);
  for (int i = 0; i < eh.e_phnum; ++i) {
    if (get<Elf64_Phdr>(b, phdr_offset(b, i)).p_type == type && nth-- == 0) return i;
  }
  return -1;
}
// vaddr -> file offset through the PT_LOADs (or SIZE_MAX).
inline size_t file_offset(const std::vector<uint8_t>& b, uint64_t vaddr) {
  const Elf64_Ehdr eh = get<Elf64_Ehdr>(b, 0);
  for (int i = 0; i < eh.e_phnum; ++i) {
    const Elf64_Phdr ph = get<Elf64_Phdr>(b, phdr_offset(b, i));
    if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
      return ph.p_offset + (vaddr - ph.p_vaddr);
  }
  return SIZE_MAX;
}
// File offset of the dynamic entry with `tag` (or SIZE_MAX).
inline size_t dyn_entry(const std::vector<uint8_t>& b, int64_t tag) {
  const Elf64_Phdr dyn = get<Elf64_Phdr>(b, phdr_offset(b, find_phdr(b, PT_DYNAMIC)));
  for (size_t off = dyn.p_offset; off + 16 <= dyn.p_offset + dyn.p_filesz; off += 16) {
    const Elf64_Dyn d = get<Elf64_Dyn>(b, off);
    if (d.d_tag == tag) return off;
    if (d.d_tag == DT_NULL) break;
  }
  return SIZE_MAX;
}
inline uint64_t dyn_value(const std::vector<uint8_t>& b, int64_t tag) {
  return get<Elf64_Dyn>(b, dyn_entry(b, tag)).d_un.d_val;
}

// Allow-list first, then anything the test process itself can resolve: the
// "permissive" table used to see what a fixture needs beyond the allow-list.
inline void* permissive_import(const std::string& name) {
  if (void* p = graphrt::elf::libc_allowlist_symbol(name)) return p;
  return dlsym(RTLD_DEFAULT, name.c_str());
}

inline graphrt::elf::LoadOptions allowlist_options(bool execute = true) {
  graphrt::elf::LoadOptions o;
  o.imports = &graphrt::elf::libc_allowlist_symbol;
  o.execute = execute;
  return o;
}

}  // namespace elf_test
