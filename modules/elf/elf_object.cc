#include "elf_object.h"

#include <elf.h>

#include <cstring>

#include "elf_parse.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

namespace {

bool range_in(uint64_t offset, uint64_t length, uint64_t total) {
  uint64_t end;
  return !__builtin_add_overflow(offset, length, &end) && end <= total;
}

Error object_error(const std::string& what) { return Error("invalid ELF object: " + what); }

Elf64_Ehdr read_header(const uint8_t* data, size_t size) {
  if (size < sizeof(Elf64_Ehdr)) throw object_error("file too small for an ELF header");
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) throw object_error("bad magic");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    throw object_error("not a little-endian ELF64 file");
  if (eh.e_type != ET_REL) throw object_error("not a relocatable object (e_type != ET_REL)");
  if (eh.e_machine != EM_X86_64)
    throw object_error("machine " + std::to_string(eh.e_machine) + " is not supported for linking (x86_64 only)").with_kind(ErrorKind::kUnsupported);
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) throw object_error("bad e_shentsize");
  if (eh.e_shnum == 0 || eh.e_shnum >= SHN_LORESERVE) throw object_error("bad e_shnum (extended numbering is not supported)");
  if (!range_in(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr), size))
    throw object_error("section header table outside the file");
  if (eh.e_shstrndx >= eh.e_shnum) throw object_error("bad e_shstrndx");
  return eh;
}

// NUL-terminated string at `offset` in string-table section `table`.
std::string string_at(const ElfObject& obj, uint32_t table, uint64_t offset, const char* what) {
  if (table >= obj.sections.size() || obj.sections[table].type != SHT_STRTAB)
    throw object_error(std::string(what) + ": string table index " + std::to_string(table) + " is not a SHT_STRTAB");
  const ObjectSection& s = obj.sections[table];
  if (offset >= s.size) throw object_error(std::string(what) + ": name offset outside the string table");
  const char* p = reinterpret_cast<const char*>(obj.data + s.offset + offset);
  const size_t n = strnlen(p, s.size - offset);
  if (n == s.size - offset) throw object_error(std::string(what) + ": name runs off the string table");
  return std::string(p, n);
}

void read_sections(ElfObject* obj, const Elf64_Ehdr& eh) {
  const uint64_t page = host_page_size();
  for (uint32_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, obj->data + eh.e_shoff + uint64_t(i) * sizeof(sh), sizeof(sh));
    ObjectSection s;
    s.type = sh.sh_type;
    s.flags = sh.sh_flags;
    s.offset = sh.sh_offset;
    s.size = sh.sh_size;
    s.align = sh.sh_addralign == 0 ? 1 : sh.sh_addralign;
    s.link = sh.sh_link;
    s.info = sh.sh_info;
    const std::string where = "section " + std::to_string(i);
    if (s.type != SHT_NOBITS && s.type != SHT_NULL && !range_in(s.offset, s.size, obj->size))
      throw object_error(where + " lies outside the file");
    if ((s.align & (s.align - 1)) != 0) throw object_error(where + " alignment is not a power of two");
    if ((s.flags & SHF_ALLOC) && s.align > page)
      throw object_error(where + " alignment " + std::to_string(s.align) + " exceeds the page size");
    obj->sections.push_back(s);
    (void)sh.sh_name;
  }
  for (uint32_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, obj->data + eh.e_shoff + uint64_t(i) * sizeof(sh), sizeof(sh));
    obj->sections[i].name = string_at(*obj, eh.e_shstrndx, sh.sh_name, "section name");
  }
}

void read_symbols(ElfObject* obj, uint32_t symtab_index) {
  const ObjectSection& symtab = obj->sections[symtab_index];
  if (symtab.size % sizeof(Elf64_Sym) != 0) throw object_error("symbol table size is not a multiple of 24");
  const uint64_t count = symtab.size / sizeof(Elf64_Sym);
  obj->symbols.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Sym es;
    std::memcpy(&es, obj->data + symtab.offset + i * sizeof(es), sizeof(es));
    ObjectSymbol sym;
    sym.bind = ELF64_ST_BIND(es.st_info);
    sym.type = ELF64_ST_TYPE(es.st_info);
    sym.visibility = ELF64_ST_VISIBILITY(es.st_other);
    sym.shndx = es.st_shndx;
    sym.value = es.st_value;
    sym.size = es.st_size;
    sym.name = es.st_name == 0 ? std::string() : string_at(*obj, symtab.link, es.st_name, "symbol name");
    const bool special = sym.shndx == SHN_UNDEF || sym.shndx == SHN_ABS || sym.shndx == SHN_COMMON;
    if (!special && sym.shndx >= obj->sections.size())
      throw object_error("symbol '" + sym.name + "' has section index " + std::to_string(sym.shndx) + " out of range");
    if (sym.type == STT_TLS) throw object_error("thread-local symbol '" + sym.name + "' is not supported").with_kind(ErrorKind::kUnsupported);
    if (sym.type == STT_GNU_IFUNC) throw object_error("IFUNC symbol '" + sym.name + "' is not supported").with_kind(ErrorKind::kUnsupported);
    obj->symbols.push_back(sym);
  }
}

void read_relocations(ElfObject* obj, uint32_t index, uint32_t symtab_index) {
  const ObjectSection& rs = obj->sections[index];
  const std::string where = "relocation section '" + rs.name + "'";
  if (rs.info >= obj->sections.size()) throw object_error(where + " patches a section out of range");
  if (!(obj->sections[rs.info].flags & SHF_ALLOC)) return;  // debug info: never loaded
  if (rs.type == SHT_REL) throw object_error(where + ": SHT_REL is not supported on x86_64 (RELA only)").with_kind(ErrorKind::kUnsupported);
  if (rs.link != symtab_index) throw object_error(where + " does not use the symbol table");
  if (rs.size % sizeof(Elf64_Rela) != 0) throw object_error(where + " size is not a multiple of 24");
  ObjectRelocations out;
  out.section = rs.info;
  const uint64_t count = rs.size / sizeof(Elf64_Rela);
  out.entries.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Rela e;
    std::memcpy(&e, obj->data + rs.offset + i * sizeof(e), sizeof(e));
    Relocation r;
    r.offset = e.r_offset;
    r.type = ELF64_R_TYPE(e.r_info);
    r.sym = ELF64_R_SYM(e.r_info);
    r.addend = e.r_addend;
    if (r.sym >= obj->symbols.size()) throw object_error(where + " entry " + std::to_string(i) + " names symbol index out of range");
    out.entries.push_back(r);
  }
  obj->relocations.push_back(std::move(out));
}

void read_group(ElfObject* obj, uint32_t index) {
  const ObjectSection& gs = obj->sections[index];
  if (gs.size < 4 || gs.size % 4 != 0) throw object_error("SHT_GROUP section '" + gs.name + "' has a bad size");
  uint32_t flags;
  std::memcpy(&flags, obj->data + gs.offset, 4);
  if (!(flags & GRP_COMDAT)) return;  // a plain group changes nothing for a static link
  if (gs.info >= obj->symbols.size()) throw object_error("SHT_GROUP section '" + gs.name + "' signature out of range");
  ObjectGroup group;
  group.signature = obj->symbols[gs.info].name;
  for (uint64_t at = 4; at < gs.size; at += 4) {
    uint32_t member;
    std::memcpy(&member, obj->data + gs.offset + at, 4);
    if (member == 0 || member >= obj->sections.size()) throw object_error("SHT_GROUP '" + gs.name + "' member out of range");
    group.sections.push_back(member);
  }
  obj->groups.push_back(std::move(group));
}

}  // namespace

bool is_elf_object(const uint8_t* data, size_t size) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0) return false;
  uint16_t type;
  std::memcpy(&type, data + offsetof(Elf64_Ehdr, e_type), sizeof(type));
  return type == ET_REL;
}

ElfObject parse_object(const uint8_t* data, size_t size, const std::string& name) {
  ElfObject obj;
  obj.name = name;
  obj.data = data;
  obj.size = size;
  try {
    const Elf64_Ehdr eh = read_header(data, size);
    obj.machine = eh.e_machine;
    read_sections(&obj, eh);
    uint32_t symtab = 0;
    for (uint32_t i = 0; i < obj.sections.size(); ++i) {
      if (obj.sections[i].type == SHT_SYMTAB) {
        if (symtab != 0) throw object_error("more than one symbol table");
        symtab = i;
      }
      if (obj.sections[i].type == SHT_SYMTAB_SHNDX) throw object_error("SHT_SYMTAB_SHNDX is not supported").with_kind(ErrorKind::kUnsupported);
    }
    if (symtab != 0) read_symbols(&obj, symtab);
    for (uint32_t i = 0; i < obj.sections.size(); ++i) {
      const ObjectSection& s = obj.sections[i];
      if (s.type == SHT_RELA || s.type == SHT_REL) {
        if (symtab == 0) throw object_error("relocations without a symbol table");
        read_relocations(&obj, i, symtab);
      } else if (s.type == SHT_GROUP) {
        if (symtab == 0) throw object_error("section group without a symbol table");
        read_group(&obj, i);
      } else if ((s.flags & SHF_ALLOC) && (s.flags & SHF_TLS)) {
        throw object_error("thread-local section '" + s.name + "' is not supported").with_kind(ErrorKind::kUnsupported);
      }
    }
  } catch (Error& e) {
    throw e.with("member", name);
  }
  return obj;
}

}  // namespace elf
}  // namespace graphrt
