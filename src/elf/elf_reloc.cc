#include "elf_reloc.h"

#include <elf.h>

#include "graphrt/error.h"
#include "reloc_x86_64.h"

namespace graphrt {
namespace elf {

uint64_t RelocContext::S(const Relocation& r) const {
  if (r.sym >= symbol_values_.size())
    throw Error(ErrorKind::kOutOfRange,
                "relocation symbol index out of range").with("symbol_index", std::to_string(r.sym));
  return symbol_values_[r.sym];
}

Error unsupported_reloc(uint16_t machine, uint32_t type) {
  return Error(ErrorKind::kUnsupported, "unsupported relocation type " + reloc_type_name(machine, type))
      .with("reloc_type", std::to_string(type));
}

std::string reloc_type_name(uint16_t machine, uint32_t type) {
  const char* name = nullptr;
  if (machine == EM_X86_64) {
    switch (type) {
      case R_X86_64_DTPMOD64: name = "R_X86_64_DTPMOD64"; break;
      case R_X86_64_DTPOFF64: name = "R_X86_64_DTPOFF64"; break;
      case R_X86_64_TPOFF64: name = "R_X86_64_TPOFF64"; break;
      case R_X86_64_IRELATIVE: name = "R_X86_64_IRELATIVE"; break;
      case R_X86_64_COPY: name = "R_X86_64_COPY"; break;
      case R_X86_64_TPOFF32: name = "R_X86_64_TPOFF32"; break;
      default: break;
    }
  } else if (machine == EM_AARCH64) {
    switch (type) {
      case R_AARCH64_COPY: name = "R_AARCH64_COPY"; break;
      case R_AARCH64_TLS_DTPMOD: name = "R_AARCH64_TLS_DTPMOD"; break;
      case R_AARCH64_TLS_TPREL: name = "R_AARCH64_TLS_TPREL"; break;
      case R_AARCH64_TLSDESC: name = "R_AARCH64_TLSDESC"; break;
      case R_AARCH64_IRELATIVE: name = "R_AARCH64_IRELATIVE"; break;
      default: break;
    }
  }
  const std::string number = std::to_string(type);
  return name ? std::string(name) + " (" + number + ")" : number;
}

namespace {

// REL: the addend is the field's current value, signed where the field is.
int64_t x86_64_addend(const Relocation& r, RelocContext& ctx, size_t bytes) {
  if (r.explicit_addend || bytes == 0) return r.addend;
  if (bytes == 8) return ctx.A<uint64_t>(r);
  return r.type == R_X86_64_32 ? ctx.A<uint32_t>(r) : ctx.A<int32_t>(r);
}

}  // namespace

// A shared object's dynamic relocation, through the one x86_64 engine
// (reloc_x86_64.h). TLS and IFUNC relocations are refused by name.
void apply_reloc_x86_64(const Relocation& r, RelocContext& ctx) {
  const size_t bytes = x86_64_reloc_field_bytes(r.type);
  X86_64RelocValues v;
  v.P = ctx.P(r);
  v.B = ctx.B();
  if (r.type != R_X86_64_RELATIVE && r.type != R_X86_64_NONE && bytes != 0) v.S = ctx.S(r);
  v.A = x86_64_addend(r, ctx, bytes);
  uint8_t* place = bytes ? ctx.image().at(r.offset, bytes, "relocation place") : nullptr;
  apply_x86_64_reloc(X86_64RelocSet::kDynamic, r.type, v, place, bytes);
}

namespace {

using ApplyFn = void (*)(const Relocation&, RelocContext&);

Relocation decode_rela(const Elf64_Rela& e) {
  Relocation r;
  r.offset = e.r_offset;
  r.type = ELF64_R_TYPE(e.r_info);
  r.sym = ELF64_R_SYM(e.r_info);
  r.addend = e.r_addend;
  return r;
}

Relocation decode_rel(const Elf64_Rel& e) {
  Relocation r;
  r.offset = e.r_offset;
  r.type = ELF64_R_TYPE(e.r_info);
  r.sym = ELF64_R_SYM(e.r_info);
  r.explicit_addend = false;
  return r;
}

// Walks one table of `Entry` records; errors get the table and entry index.
template <typename Entry>
void apply_table(const TableRef& table, const char* table_name, Relocation (*decode)(const Entry&), ApplyFn apply,
                 RelocContext& ctx) {
  if (!table.present) return;
  if (table.size % sizeof(Entry) != 0)
    throw Error(std::string(table_name) + " size is not a multiple of the entry size").with("size", std::to_string(table.size));
  ctx.image().at(table.vaddr, table.size, table_name);
  const uint64_t count = table.size / sizeof(Entry);
  for (uint64_t i = 0; i < count; ++i) {
    const Relocation r = decode(ctx.image().read<Entry>(table.vaddr + i * sizeof(Entry), table_name));
    try {
      apply(r, ctx);
    } catch (Error& e) {
      throw e.with("relocation", std::string(table_name) + "[" + std::to_string(i) + "]").with("offset", hex(r.offset));
    }
  }
}

void check_entry_sizes(const DynamicInfo& dyn) {
  if (dyn.relaent && *dyn.relaent != sizeof(Elf64_Rela)) throw Error("DT_RELAENT is not 24");
  if (dyn.relent && *dyn.relent != sizeof(Elf64_Rel)) throw Error("DT_RELENT is not 16");
  if (dyn.jmprel.present && dyn.pltrel && *dyn.pltrel != DT_RELA && *dyn.pltrel != DT_REL)
    throw Error("DT_PLTREL is neither DT_RELA nor DT_REL");
}

}  // namespace

void apply_relocations(MappedImage& image, const DynamicInfo& dyn, uint16_t machine,
                       const std::vector<uint64_t>& symbol_values) {
  check_entry_sizes(dyn);
  const ApplyFn apply = machine == EM_X86_64 ? &apply_reloc_x86_64 : &apply_reloc_aarch64;
  RelocContext ctx(image, symbol_values);
  apply_table<Elf64_Rela>(dyn.rela, "DT_RELA", &decode_rela, apply, ctx);
  apply_table<Elf64_Rel>(dyn.rel, "DT_REL", &decode_rel, apply, ctx);
  // DT_PLTREL absent: both toolchains we see emit RELA on 64-bit targets.
  if (dyn.pltrel && *dyn.pltrel == DT_REL)
    apply_table<Elf64_Rel>(dyn.jmprel, "DT_JMPREL", &decode_rel, apply, ctx);
  else
    apply_table<Elf64_Rela>(dyn.jmprel, "DT_JMPREL", &decode_rela, apply, ctx);
}

}  // namespace elf
}  // namespace graphrt
