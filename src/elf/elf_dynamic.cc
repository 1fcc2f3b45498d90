#include "elf_dynamic.h"

#include <algorithm>
#include <cstring>

#include "graphrt/error.h"

namespace graphrt {
namespace elf {

namespace {

void set_table(TableRef* t, uint64_t vaddr) {
  t->vaddr = vaddr;
  t->present = true;
}

// Applies one dynamic entry; tags the loader does not need are ignored.
void apply_tag(DynamicInfo* d, const Elf64_Dyn& e) {
  const uint64_t v = e.d_un.d_val;
  switch (e.d_tag) {
    case DT_SYMTAB: d->symtab = v; break;
    case DT_STRTAB: d->strtab = v; break;
    case DT_STRSZ: d->strsz = v; break;
    case DT_SYMENT: d->syment = v; break;
    case DT_HASH: d->hash = v; break;
    case DT_GNU_HASH: d->gnu_hash = v; break;
    case DT_RELA: set_table(&d->rela, v); break;
    case DT_RELASZ: d->rela.size = v; break;
    case DT_RELAENT: d->relaent = v; break;
    case DT_REL: set_table(&d->rel, v); break;
    case DT_RELSZ: d->rel.size = v; break;
    case DT_RELENT: d->relent = v; break;
    case DT_JMPREL: set_table(&d->jmprel, v); break;
    case DT_PLTRELSZ: d->jmprel.size = v; break;
    case DT_PLTREL: d->pltrel = v; break;
    case DT_INIT: d->init = v; break;
    case DT_FINI: d->fini = v; break;
    case DT_INIT_ARRAY: set_table(&d->init_array, v); break;
    case DT_INIT_ARRAYSZ: d->init_array.size = v; break;
    case DT_FINI_ARRAY: set_table(&d->fini_array, v); break;
    case DT_FINI_ARRAYSZ: d->fini_array.size = v; break;
    case DT_NEEDED: d->needed.push_back(v); break;
    case DT_TEXTREL: throw Error(ErrorKind::kUnsupported, "text relocations (DT_TEXTREL) are not supported");
    default: break;
  }
}

Error dyn_error(const std::string& what) { return Error("invalid ELF dynamic section: " + what); }

uint32_t sysv_hash(const std::string& name) {
  uint32_t h = 0;
  for (unsigned char c : name) {
    h = (h << 4) + c;
    const uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

uint32_t gnu_hash(const std::string& name) {
  uint32_t h = 5381;
  for (unsigned char c : name) h = h * 33 + c;
  return h;
}

// DT_GNU_HASH header: nbuckets, symoffset, bloom words, bloom shift.
struct GnuHeader {
  uint32_t nbuckets, symoffset, bloom_size, bloom_shift;
};

GnuHeader read_gnu_header(const MappedImage& image, uint64_t at) {
  GnuHeader h;
  h.nbuckets = image.read<uint32_t>(at, "DT_GNU_HASH header");
  h.symoffset = image.read<uint32_t>(at + 4, "DT_GNU_HASH header");
  h.bloom_size = image.read<uint32_t>(at + 8, "DT_GNU_HASH header");
  h.bloom_shift = image.read<uint32_t>(at + 12, "DT_GNU_HASH header");
  if (h.nbuckets == 0 || h.bloom_size == 0 || h.bloom_shift >= 32) throw dyn_error("malformed DT_GNU_HASH header");
  return h;
}

uint64_t gnu_buckets(uint64_t at, const GnuHeader& h) { return at + 16 + uint64_t(h.bloom_size) * 8; }
uint64_t gnu_chains(uint64_t at, const GnuHeader& h) { return gnu_buckets(at, h) + uint64_t(h.nbuckets) * 4; }

}  // namespace

DynamicInfo parse_dynamic(const MappedImage& image, const Segment& dynamic) {
  DynamicInfo d;
  const uint64_t count = dynamic.memsz / sizeof(Elf64_Dyn);
  image.at(dynamic.vaddr, count * sizeof(Elf64_Dyn), "PT_DYNAMIC table");
  for (uint64_t i = 0; i < count; ++i) {
    const Elf64_Dyn e = image.read<Elf64_Dyn>(dynamic.vaddr + i * sizeof(Elf64_Dyn), "PT_DYNAMIC entry");
    if (e.d_tag == DT_NULL) break;
    apply_tag(&d, e);
  }
  if (!d.symtab || !d.strtab || !d.strsz) throw dyn_error("missing DT_SYMTAB, DT_STRTAB or DT_STRSZ");
  if (d.syment && *d.syment != sizeof(Elf64_Sym)) throw dyn_error("DT_SYMENT is not " + std::to_string(sizeof(Elf64_Sym)));
  if (!d.hash && !d.gnu_hash) throw dyn_error("neither DT_HASH nor DT_GNU_HASH: cannot size the symbol table");
  return d;
}

SymbolTable::SymbolTable(const MappedImage& image, const DynamicInfo& dyn)
    : image_(image), symtab_(*dyn.symtab), strtab_(*dyn.strtab), strsz_(*dyn.strsz), hash_(dyn.hash),
      gnu_hash_(dyn.gnu_hash) {
  image_.at(strtab_, strsz_, "DT_STRTAB");
  count_ = hash_ ? count_from_sysv() : count_from_gnu();
  if (count_ == 0) throw dyn_error("empty dynamic symbol table");
  image_.at(symtab_, uint64_t(count_) * sizeof(Elf64_Sym), "DT_SYMTAB");
}

size_t SymbolTable::count_from_sysv() const {
  image_.at(*hash_, 8, "DT_HASH header");
  return image_.read<uint32_t>(*hash_ + 4, "DT_HASH nchain");  // nchain == number of symbols
}

// GNU hash has no symbol count: the highest symbol reachable from any bucket,
// followed along its chain to the end-of-chain bit, is the last one.
size_t SymbolTable::count_from_gnu() const {
  const GnuHeader h = read_gnu_header(image_, *gnu_hash_);
  const uint64_t buckets = gnu_buckets(*gnu_hash_, h);
  image_.at(buckets, uint64_t(h.nbuckets) * 4, "DT_GNU_HASH buckets");
  uint32_t last = 0;
  for (uint32_t b = 0; b < h.nbuckets; ++b) last = std::max(last, image_.read<uint32_t>(buckets + 4ull * b, "bucket"));
  if (last < h.symoffset) return h.symoffset;
  const uint64_t chains = gnu_chains(*gnu_hash_, h);
  // No real table holds more symbols than the image has room for.
  const uint64_t limit = image_.size() / sizeof(Elf64_Sym);
  for (uint64_t i = last;; ++i) {
    if (i > limit) throw dyn_error("DT_GNU_HASH chain has no end");
    if ((image_.read<uint32_t>(chains + 4 * (i - h.symoffset), "DT_GNU_HASH chain") & 1u) != 0) return i + 1;
  }
}

Elf64_Sym SymbolTable::symbol(size_t index) const {
  if (index >= count_) throw Error("symbol index out of range").with("symbol_index", std::to_string(index));
  return image_.read<Elf64_Sym>(symtab_ + uint64_t(index) * sizeof(Elf64_Sym), "dynamic symbol");
}

std::string SymbolTable::string_at(uint64_t offset) const {
  if (offset >= strsz_) throw dyn_error("string offset " + hex(offset) + " outside DT_STRTAB");
  const char* s = reinterpret_cast<const char*>(image_.at(strtab_ + offset, strsz_ - offset, "string"));
  const size_t n = strnlen(s, strsz_ - offset);
  if (n == strsz_ - offset) throw dyn_error("unterminated string in DT_STRTAB");
  return std::string(s, n);
}

std::string SymbolTable::name(const Elf64_Sym& sym) const { return string_at(sym.st_name); }

bool SymbolTable::is_exported(const Elf64_Sym& sym) {
  const unsigned bind = ELF64_ST_BIND(sym.st_info);
  return sym.st_shndx != SHN_UNDEF && sym.st_name != 0 && (bind == STB_GLOBAL || bind == STB_WEAK);
}

bool SymbolTable::matches(size_t index, const std::string& name) const {
  const Elf64_Sym sym = symbol(index);
  if (!is_exported(sym) || sym.st_name >= strsz_) return false;
  return string_at(sym.st_name) == name;
}

std::optional<size_t> SymbolTable::find_defined(const std::string& name) const {
  if (gnu_hash_) return find_gnu(name);
  if (hash_) return find_sysv(name);
  return find_linear(name);
}

std::optional<size_t> SymbolTable::find_gnu(const std::string& name) const {
  const GnuHeader h = read_gnu_header(image_, *gnu_hash_);
  const uint32_t hv = gnu_hash(name);
  // Bloom filter first: rejects most misses with one word read.
  const uint64_t word = image_.read<uint64_t>(*gnu_hash_ + 16 + 8ull * ((hv / 64) % h.bloom_size), "DT_GNU_HASH bloom");
  const uint64_t mask = (uint64_t(1) << (hv % 64)) | (uint64_t(1) << ((hv >> h.bloom_shift) % 64));
  if ((word & mask) != mask) return std::nullopt;
  uint64_t i = image_.read<uint32_t>(gnu_buckets(*gnu_hash_, h) + 4ull * (hv % h.nbuckets), "DT_GNU_HASH bucket");
  if (i < h.symoffset) return std::nullopt;
  for (; i < count_; ++i) {
    const uint32_t chain = image_.read<uint32_t>(gnu_chains(*gnu_hash_, h) + 4 * (i - h.symoffset), "DT_GNU_HASH chain");
    if ((chain | 1u) == (hv | 1u) && matches(i, name)) return i;
    if (chain & 1u) break;
  }
  return std::nullopt;
}

std::optional<size_t> SymbolTable::find_sysv(const std::string& name) const {
  const uint32_t nbucket = image_.read<uint32_t>(*hash_, "DT_HASH nbucket");
  if (nbucket == 0) return find_linear(name);
  const uint64_t buckets = *hash_ + 8;
  const uint64_t chains = buckets + 4ull * nbucket;
  uint64_t i = image_.read<uint32_t>(buckets + 4ull * (sysv_hash(name) % nbucket), "DT_HASH bucket");
  // A corrupt chain may loop; no valid chain is longer than the table.
  for (size_t steps = 0; i != STN_UNDEF && i < count_ && steps < count_; ++steps) {
    if (matches(i, name)) return i;
    i = image_.read<uint32_t>(chains + 4 * i, "DT_HASH chain");
  }
  return std::nullopt;
}

std::optional<size_t> SymbolTable::find_linear(const std::string& name) const {
  for (size_t i = 1; i < count_; ++i) {
    if (matches(i, name)) return i;
  }
  return std::nullopt;
}

}  // namespace elf
}  // namespace graphrt
