#include "elf_object.h"

#include <elf.h>

#include <cstring>

#include "elf_file.h"
#include "elf_parse.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

namespace {

Error object_error(const std::string& what) { return Error("invalid ELF object: " + what); }

// The object's own checks on top of the reader's (elf_file.h).
void check_header(const Elf64_Ehdr& eh) {
  if (eh.e_type != ET_REL) throw object_error("not a relocatable object (e_type != ET_REL)");
  if (eh.e_machine != EM_X86_64)
    throw object_error("machine " + std::to_string(eh.e_machine) + " is not supported for linking (x86_64 only)").with_kind(ErrorKind::kUnsupported);
}

// NUL-terminated string at `offset` in string-table section `table`.
std::string string_at(const ElfFile& file, const std::vector<Elf64_Shdr>& headers, uint32_t table, uint64_t offset,
                      const char* what) {
  if (table >= headers.size() || headers[table].sh_type != SHT_STRTAB)
    throw object_error(std::string(what) + ": string table index " + std::to_string(table) + " is not a SHT_STRTAB");
  if (offset >= headers[table].sh_size) throw object_error(std::string(what) + ": name offset outside the string table");
  std::string name;
  if (!file.string_at(headers[table], offset, &name))
    throw object_error(std::string(what) + ": name runs off the string table");
  return name;
}

void read_sections(ElfObject* obj, const ElfFile& file, const std::vector<Elf64_Shdr>& headers) {
  const uint64_t page = host_page_size();
  for (uint32_t i = 0; i < headers.size(); ++i) {
    const Elf64_Shdr& sh = headers[i];
    ObjectSection s;
    s.type = sh.sh_type;
    s.flags = sh.sh_flags;
    s.offset = sh.sh_offset;
    s.size = sh.sh_size;
    s.align = sh.sh_addralign == 0 ? 1 : sh.sh_addralign;
    s.link = sh.sh_link;
    s.info = sh.sh_info;
    const std::string where = "section " + std::to_string(i);
    if (!file.section_in_file(sh))
      throw object_error(where + " lies outside the file");
    if ((s.align & (s.align - 1)) != 0) throw object_error(where + " alignment is not a power of two");
    if ((s.flags & SHF_ALLOC) && s.align > page)
      throw object_error(where + " alignment " + std::to_string(s.align) + " exceeds the page size");
    obj->sections.push_back(s);
  }
  if (file.header().e_shstrndx >= headers.size()) throw object_error("bad e_shstrndx");
  for (uint32_t i = 0; i < headers.size(); ++i)
    obj->sections[i].name = string_at(file, headers, file.header().e_shstrndx, headers[i].sh_name, "section name");
}

void read_symbols(ElfObject* obj, const ElfFile& file, const std::vector<Elf64_Shdr>& headers, uint32_t symtab_index) {
  const ObjectSection& symtab = obj->sections[symtab_index];
  if (symtab.size % sizeof(Elf64_Sym) != 0) throw object_error("symbol table size is not a multiple of 24");
  const uint64_t count = symtab.size / sizeof(Elf64_Sym);
  obj->symbols.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    Elf64_Sym es;
    if (!file.entry(headers[symtab_index], i, &es)) throw object_error("symbol table lies outside the file");
    ObjectSymbol sym;
    sym.bind = ELF64_ST_BIND(es.st_info);
    sym.type = ELF64_ST_TYPE(es.st_info);
    sym.visibility = ELF64_ST_VISIBILITY(es.st_other);
    sym.shndx = es.st_shndx;
    sym.value = es.st_value;
    sym.size = es.st_size;
    sym.name = es.st_name == 0 ? std::string() : string_at(file, headers, symtab.link, es.st_name, "symbol name");
    const bool special = sym.shndx == SHN_UNDEF || sym.shndx == SHN_ABS || sym.shndx == SHN_COMMON;
    if (!special && sym.shndx >= obj->sections.size())
      throw object_error("symbol '" + sym.name + "' has section index " + std::to_string(sym.shndx) + " out of range");
    if (sym.type == STT_TLS) throw object_error("thread-local symbol '" + sym.name + "' is not supported").with_kind(ErrorKind::kUnsupported);
    if (sym.type == STT_GNU_IFUNC) throw object_error("IFUNC symbol '" + sym.name + "' is not supported").with_kind(ErrorKind::kUnsupported);
    obj->symbols.push_back(sym);
  }
}

void read_relocations(ElfObject* obj, const ElfFile& file, const std::vector<Elf64_Shdr>& headers, uint32_t index,
                      uint32_t symtab_index) {
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
    if (!file.entry(headers[index], i, &e)) throw object_error(where + " lies outside the file");
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

void read_group(ElfObject* obj, const ElfFile& file, const std::vector<Elf64_Shdr>& headers, uint32_t index) {
  const ObjectSection& gs = obj->sections[index];
  if (gs.size < 4 || gs.size % 4 != 0) throw object_error("SHT_GROUP section '" + gs.name + "' has a bad size");
  uint32_t flags;
  if (!file.entry(headers[index], 0, &flags)) throw object_error("SHT_GROUP section '" + gs.name + "' lies outside the file");
  if (!(flags & GRP_COMDAT)) return;  // a plain group changes nothing for a static link
  if (gs.info >= obj->symbols.size()) throw object_error("SHT_GROUP section '" + gs.name + "' signature out of range");
  ObjectGroup group;
  group.signature = obj->symbols[gs.info].name;
  for (uint64_t k = 1; k < gs.size / 4; ++k) {
    uint32_t member;
    if (!file.entry(headers[index], k, &member)) throw object_error("SHT_GROUP '" + gs.name + "' lies outside the file");
    if (member == 0 || member >= obj->sections.size()) throw object_error("SHT_GROUP '" + gs.name + "' member out of range");
    group.sections.push_back(member);
  }
  obj->groups.push_back(std::move(group));
}

}  // namespace

bool is_elf_object(const uint8_t* data, size_t size) { return ElfFile::has_type(data, size, ET_REL); }

ElfObject parse_object(const uint8_t* data, size_t size, const std::string& name) {
  ElfObject obj;
  obj.name = name;
  obj.data = data;
  obj.size = size;
  try {
    const ElfFile file(data, size);
    check_header(file.header());
    const std::vector<Elf64_Shdr> headers = file.section_headers();
    obj.machine = file.header().e_machine;
    read_sections(&obj, file, headers);
    uint32_t symtab = 0;
    for (uint32_t i = 0; i < obj.sections.size(); ++i) {
      if (obj.sections[i].type == SHT_SYMTAB) {
        if (symtab != 0) throw object_error("more than one symbol table");
        symtab = i;
      }
      if (obj.sections[i].type == SHT_SYMTAB_SHNDX) throw object_error("SHT_SYMTAB_SHNDX is not supported").with_kind(ErrorKind::kUnsupported);
    }
    if (symtab != 0) read_symbols(&obj, file, headers, symtab);
    for (uint32_t i = 0; i < obj.sections.size(); ++i) {
      const ObjectSection& s = obj.sections[i];
      if (s.type == SHT_RELA || s.type == SHT_REL) {
        if (symtab == 0) throw object_error("relocations without a symbol table");
        read_relocations(&obj, file, headers, i, symtab);
      } else if (s.type == SHT_GROUP) {
        if (symtab == 0) throw object_error("section group without a symbol table");
        read_group(&obj, file, headers, i);
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
