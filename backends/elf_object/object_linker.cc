#include "object_linker.h"

#include <elf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "src/elf/elf_memory.h"
#include "src/elf/elf_parse.h"
#include "graphrt/error.h"
#include "src/elf/reloc_x86_64.h"

namespace graphrt {
namespace elf {

struct LinkedObjects::State {
  MappedImage image;
  std::vector<void (*)()> finalizers;  // in call order
  bool initialized = false;
};

namespace {

using VoidFn = void (*)();

enum Region { kText, kReadOnly, kData };

struct SymbolRef {
  size_t object = 0;
  uint32_t index = 0;
};

// Links a fixed set of parsed objects into one MappedImage. One instance per
// link; the steps run in the order of run().
class Linker {
 public:
  Linker(const std::vector<ElfObject>& objects, const LoadOptions& options) : objects_(objects), options_(options) {}

  void run(LinkedObjects::State* state, std::vector<std::string>* imports, std::map<std::string, SymbolInfo>* exports) {
    select_sections();
    collect_globals();
    resolve_externals(imports);
    plan_got_and_stubs();
    layout();
    state->image = MappedImage(0, image_size_);
    image_ = &state->image;
    copy_sections();
    image_->plan_protection(segments_, options_.execute);
    compute_values();
    fill_got_and_stubs();
    relocate();
    image_->apply_protection(segments_);
    collect_exports(exports);
  }

  // .preinit_array, .init_array (by priority), and .fini_array entries, validated.
  std::vector<VoidFn> initializers() const;
  std::vector<VoidFn> finalizers() const;

 private:
  const ObjectSymbol& sym(SymbolRef r) const { return objects_[r.object].symbols[r.index]; }
  bool in_kept_section(size_t o, uint16_t shndx) const {
    return shndx != SHN_UNDEF && shndx < kept_[o].size() && kept_[o][shndx];
  }
  // Global and weak symbols, and undefined ones, are resolved by name.
  static bool by_name(const ObjectSymbol& s) { return s.bind != STB_LOCAL; }
  std::string identity(SymbolRef r) const {
    return by_name(sym(r)) ? sym(r).name : "#" + std::to_string(r.object) + ":" + std::to_string(r.index);
  }

  void select_sections();
  void collect_globals();
  void add_common(const ElfObject& obj, const ObjectSymbol& s);
  void resolve_externals(std::vector<std::string>* imports);
  void plan_got_and_stubs();
  void layout();
  uint64_t advance(uint64_t offset, uint64_t by, const std::string& what) const;
  void copy_sections();
  uint64_t address_of_name(const std::string& name, uint64_t* size) const;
  void compute_values();
  void fill_got_and_stubs();
  void relocate();
  void relocate_one(size_t o, const ObjectRelocations& rels, size_t i);
  void collect_exports(std::map<std::string, SymbolInfo>* exports) const;
  std::vector<VoidFn> function_arrays(uint32_t type) const;

  const std::vector<ElfObject>& objects_;
  const LoadOptions& options_;
  std::vector<std::vector<bool>> kept_;               // [object][section]: loaded
  std::vector<std::vector<uint64_t>> section_vaddr_;  // [object][section]
  struct Global {
    SymbolRef def;
    bool weak = false;
  };
  std::map<std::string, Global> globals_;
  struct Common {
    uint64_t size = 0, align = 1, vaddr = 0;
  };
  std::map<std::string, Common> commons_;
  std::map<std::string, uint64_t> externals_;  // resolved through the import table (0: unresolved weak)
  std::map<std::string, size_t> got_slots_;    // symbol identity -> slot
  std::vector<SymbolRef> got_refs_;            // slot -> a symbol with that identity
  std::map<std::string, size_t> stubs_;        // imported name -> stub
  uint64_t got_vaddr_ = 0, stub_vaddr_ = 0, image_size_ = 0;
  ParsedElf segments_;
  MappedImage* image_ = nullptr;
  std::vector<std::vector<uint64_t>> values_;  // [object][symbol]: host address (S)
  std::vector<std::vector<uint64_t>> sizes_;   // [object][symbol]: Z
  std::vector<std::vector<bool>> placed_;      // [object][symbol]: has an address
};

Error member_error(const std::string& what, const ElfObject& obj) { return Error(what).with("member", obj.name); }

void Linker::select_sections() {
  std::map<std::string, size_t> seen_groups;
  kept_.resize(objects_.size());
  for (size_t o = 0; o < objects_.size(); ++o) {
    const ElfObject& obj = objects_[o];
    kept_[o].assign(obj.sections.size(), false);
    for (size_t s = 0; s < obj.sections.size(); ++s) {
      const ObjectSection& sec = obj.sections[s];
      // SHT_NULL has no file range to copy even when a corrupt header marks it allocated.
      if (!(sec.flags & SHF_ALLOC) || sec.type == SHT_NULL) continue;
      if ((sec.flags & SHF_WRITE) && (sec.flags & SHF_EXECINSTR))
        throw member_error("writable and executable section '" + sec.name + "' (W^X)", obj);
      kept_[o][s] = true;
    }
    // COMDAT: the first object to bring a group signature keeps its copy.
    for (const ObjectGroup& g : obj.groups) {
      if (seen_groups.emplace(g.signature, o).second) continue;
      for (uint32_t s : g.sections) kept_[o][s] = false;
    }
  }
}

void Linker::add_common(const ElfObject& obj, const ObjectSymbol& s) {
  // For COMMON symbols st_value is the alignment.
  const uint64_t align = s.value == 0 ? 1 : s.value;
  if ((align & (align - 1)) != 0 || align > host_page_size())
    throw member_error("COMMON symbol '" + s.name + "' has a bad alignment", obj);
  Common& c = commons_[s.name];
  c.size = std::max(c.size, s.size);
  c.align = std::max(c.align, align);
}

void Linker::collect_globals() {
  for (size_t o = 0; o < objects_.size(); ++o) {
    const ElfObject& obj = objects_[o];
    for (uint32_t i = 1; i < obj.symbols.size(); ++i) {
      const ObjectSymbol& s = obj.symbols[i];
      if (s.shndx != SHN_UNDEF && s.shndx != SHN_ABS && s.shndx != SHN_COMMON && s.value > obj.sections[s.shndx].size)
        throw member_error("symbol '" + s.name + "' lies outside its section", obj);
      if (!by_name(s) || s.name.empty() || s.shndx == SHN_UNDEF) continue;
      if (s.shndx == SHN_COMMON) {
        add_common(obj, s);
        continue;
      }
      if (s.shndx != SHN_ABS && !in_kept_section(o, s.shndx)) continue;  // a discarded COMDAT copy
      const bool weak = s.bind == STB_WEAK;
      auto it = globals_.find(s.name);
      if (it == globals_.end()) {
        globals_.emplace(s.name, Global{SymbolRef{o, i}, weak});
      } else if (it->second.weak && !weak) {
        it->second = Global{SymbolRef{o, i}, weak};
      } else if (!it->second.weak && !weak) {
        throw member_error("symbol '" + s.name + "' is defined twice (also in member '" +
                               objects_[it->second.def.object].name + "')",
                           obj)
            .with("symbol", s.name);
      }
    }
  }
  for (auto it = commons_.begin(); it != commons_.end();) {
    it = globals_.count(it->first) ? commons_.erase(it) : std::next(it);  // a real definition wins
  }
}

void Linker::resolve_externals(std::vector<std::string>* imports) {
  for (size_t o = 0; o < objects_.size(); ++o) {
    const ElfObject& obj = objects_[o];
    for (uint32_t i = 1; i < obj.symbols.size(); ++i) {
      const ObjectSymbol& s = obj.symbols[i];
      if (!by_name(s) || s.name.empty()) continue;
      if (globals_.count(s.name) || commons_.count(s.name) || s.name == "_GLOBAL_OFFSET_TABLE_") continue;
      if (s.shndx == SHN_ABS || s.shndx == SHN_COMMON) continue;
      auto it = externals_.find(s.name);
      if (it == externals_.end()) {
        void* p = options_.imports ? options_.imports(s.name) : nullptr;
        it = externals_.emplace(s.name, reinterpret_cast<uint64_t>(p)).first;
        if (p != nullptr) imports->push_back(s.name);
      }
      // An unresolved weak reference is legal and reads as 0.
      if (it->second == 0 && s.bind != STB_WEAK)
        throw member_error("unresolved symbol '" + s.name +
                               "' (defined in no member of the export and not in graphrt's import table)",
                           obj)
            .with("symbol", s.name).with_kind(ErrorKind::kNotFound);
    }
  }
}

void Linker::plan_got_and_stubs() {
  for (size_t o = 0; o < objects_.size(); ++o) {
    for (const ObjectRelocations& rels : objects_[o].relocations) {
      if (!kept_[o][rels.section]) continue;
      for (const Relocation& r : rels.entries) {
        const SymbolRef ref{o, r.sym};
        if (needs_got_slot_x86_64(r.type) && got_slots_.emplace(identity(ref), got_refs_.size()).second)
          got_refs_.push_back(ref);
        const ObjectSymbol& s = sym(ref);
        if (may_use_stub_x86_64(r.type) && by_name(s) && externals_.count(s.name))
          stubs_.emplace(s.name, stubs_.size());
      }
    }
  }
}

uint64_t Linker::advance(uint64_t offset, uint64_t by, const std::string& what) const {
  if (by > options_.max_image_size || offset + by > options_.max_image_size)
    throw Error(ErrorKind::kResourceExhausted,
                "linked image exceeds the size limit of " + std::to_string(options_.max_image_size) + " bytes at " + what);
  return offset + by;
}

Region region_of(const ObjectSection& s) {
  if (s.flags & SHF_EXECINSTR) return kText;
  return (s.flags & SHF_WRITE) ? kData : kReadOnly;
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

void Linker::layout() {
  const uint64_t page = host_page_size();
  section_vaddr_.resize(objects_.size());
  for (size_t o = 0; o < objects_.size(); ++o) section_vaddr_[o].assign(objects_[o].sections.size(), 0);
  uint64_t offset = 0;
  const uint32_t flags[] = {PF_R | PF_X, PF_R, PF_R | PF_W};
  for (Region region : {kText, kReadOnly, kData}) {
    const uint64_t start = offset;
    for (size_t o = 0; o < objects_.size(); ++o) {
      for (size_t s = 0; s < objects_[o].sections.size(); ++s) {
        const ObjectSection& sec = objects_[o].sections[s];
        if (!kept_[o][s] || region_of(sec) != region) continue;
        offset = align_up(offset, sec.align);
        section_vaddr_[o][s] = offset;
        offset = advance(offset, sec.size, "section '" + sec.name + "' of member '" + objects_[o].name + "'");
      }
    }
    if (region == kText) {
      offset = align_up(offset, kStubSize);
      stub_vaddr_ = offset;
      offset = advance(offset, kStubSize * stubs_.size(), "the call stubs");
    } else if (region == kReadOnly) {
      offset = align_up(offset, 8);
      got_vaddr_ = offset;
      offset = advance(offset, 8 * got_refs_.size(), "the GOT");
    } else {
      for (auto& kv : commons_) {
        offset = align_up(offset, kv.second.align);
        kv.second.vaddr = offset;
        offset = advance(offset, kv.second.size, "COMMON symbol '" + kv.first + "'");
      }
    }
    offset = advance(align_up(offset, page), 0, "page rounding");
    if (offset > start) {
      Segment seg;
      seg.type = PT_LOAD;
      seg.flags = flags[region];
      seg.vaddr = start;
      seg.memsz = offset - start;
      segments_.loads.push_back(seg);
    }
  }
  image_size_ = std::max(offset, page);
  segments_.vaddr_min = 0;
  segments_.vaddr_max = image_size_;
}

void Linker::copy_sections() {
  for (size_t o = 0; o < objects_.size(); ++o) {
    const ElfObject& obj = objects_[o];
    for (size_t s = 0; s < obj.sections.size(); ++s) {
      const ObjectSection& sec = obj.sections[s];
      if (!kept_[o][s] || sec.type == SHT_NOBITS || sec.size == 0) continue;
      std::memcpy(image_->at(section_vaddr_[o][s], sec.size, "section"), obj.data + sec.offset, sec.size);
    }
  }
}

uint64_t Linker::address_of_name(const std::string& name, uint64_t* size) const {
  const uint64_t bias = image_->bias();
  *size = 0;
  if (auto g = globals_.find(name); g != globals_.end()) {
    const ObjectSymbol& d = sym(g->second.def);
    *size = d.size;
    if (d.shndx == SHN_ABS) return d.value;
    return bias + section_vaddr_[g->second.def.object][d.shndx] + d.value;
  }
  if (auto c = commons_.find(name); c != commons_.end()) {
    *size = c->second.size;
    return bias + c->second.vaddr;
  }
  if (name == "_GLOBAL_OFFSET_TABLE_") return bias + got_vaddr_;
  auto e = externals_.find(name);
  return e == externals_.end() ? 0 : e->second;
}

void Linker::compute_values() {
  const uint64_t bias = image_->bias();
  values_.resize(objects_.size());
  sizes_.resize(objects_.size());
  placed_.resize(objects_.size());
  for (size_t o = 0; o < objects_.size(); ++o) {
    const ElfObject& obj = objects_[o];
    values_[o].assign(obj.symbols.size(), 0);
    sizes_[o].assign(obj.symbols.size(), 0);
    placed_[o].assign(obj.symbols.size(), true);
    for (uint32_t i = 1; i < obj.symbols.size(); ++i) {
      const ObjectSymbol& s = obj.symbols[i];
      if (by_name(s) && !s.name.empty()) {
        values_[o][i] = address_of_name(s.name, &sizes_[o][i]);
      } else if (s.shndx == SHN_ABS) {
        values_[o][i] = s.value;
      } else if (in_kept_section(o, s.shndx)) {
        values_[o][i] = bias + section_vaddr_[o][s.shndx] + s.value;
        sizes_[o][i] = s.size;
      } else {
        placed_[o][i] = s.shndx == SHN_UNDEF && s.name.empty();  // e.g. a debug-section symbol: unusable
      }
    }
  }
}

void Linker::fill_got_and_stubs() {
  for (size_t slot = 0; slot < got_refs_.size(); ++slot) {
    const SymbolRef r = got_refs_[slot];
    image_->write<uint64_t>(got_vaddr_ + 8 * slot, values_[r.object][r.index], "GOT slot");
  }
  for (const auto& kv : stubs_)
    write_stub_x86_64(image_->at(stub_vaddr_ + kStubSize * kv.second, kStubSize, "call stub"), externals_.at(kv.first));
}

void Linker::relocate_one(size_t o, const ObjectRelocations& rels, size_t i) {
  const ElfObject& obj = objects_[o];
  const ObjectSection& target = obj.sections[rels.section];
  const Relocation& r = rels.entries[i];
  if (target.type == SHT_NOBITS) throw Error("relocation patches a section without file data (SHT_NOBITS)");
  if (r.offset >= target.size) throw Error("relocation offset lies outside its section");
  if (!placed_[o][r.sym]) throw Error("relocation refers to a symbol in a section that is not loaded");
  const uint64_t place_vaddr = section_vaddr_[o][rels.section] + r.offset;
  X86_64RelocValues v;
  v.P = image_->bias() + place_vaddr;
  v.S = values_[o][r.sym];
  v.A = r.addend;
  v.Z = sizes_[o][r.sym];
  v.GOT = image_->bias() + got_vaddr_;
  const SymbolRef ref{o, r.sym};
  if (needs_got_slot_x86_64(r.type)) v.got_slot = v.GOT + 8 * got_slots_.at(identity(ref));
  const ObjectSymbol& s = sym(ref);
  if (may_use_stub_x86_64(r.type) && by_name(s)) {
    auto stub = stubs_.find(s.name);
    if (stub != stubs_.end()) v.stub = image_->bias() + stub_vaddr_ + kStubSize * stub->second;
  }
  apply_x86_64_reloc(X86_64RelocSet::kObject, r.type, v, image_->at(place_vaddr, 1, "relocation place"), target.size - r.offset);
}

void Linker::relocate() {
  for (size_t o = 0; o < objects_.size(); ++o) {
    const ElfObject& obj = objects_[o];
    for (const ObjectRelocations& rels : obj.relocations) {
      if (!kept_[o][rels.section]) continue;
      for (size_t i = 0; i < rels.entries.size(); ++i) {
        try {
          relocate_one(o, rels, i);
        } catch (Error& e) {
          const ObjectSymbol& s = obj.symbols[rels.entries[i].sym];
          e.with("member", obj.name).with("section", obj.sections[rels.section].name).with("relocation", std::to_string(i));
          if (!s.name.empty()) e.with("symbol", s.name);
          throw;
        }
      }
    }
  }
}

void Linker::collect_exports(std::map<std::string, SymbolInfo>* exports) const {
  for (const auto& kv : globals_) {
    const ObjectSymbol& d = sym(kv.second.def);
    if (d.visibility != STV_DEFAULT && d.visibility != STV_PROTECTED) continue;
    SymbolInfo info;
    info.address = reinterpret_cast<void*>(values_[kv.second.def.object][kv.second.def.index]);
    info.size = d.size;
    info.type = d.type;
    exports->emplace(kv.first, info);
  }
  for (const auto& kv : commons_) {
    SymbolInfo info;
    info.address = reinterpret_cast<void*>(image_->bias() + kv.second.vaddr);
    info.size = kv.second.size;
    info.type = STT_OBJECT;
    exports->emplace(kv.first, info);
  }
}

// ".init_array.101" runs before ".init_array.200", which runs before the
// plain ".init_array" (priority 65535 and later), as in a static link.
unsigned array_priority(const std::string& name) {
  const size_t dot = name.find('.', 1);
  if (dot == std::string::npos) return 65536;
  return static_cast<unsigned>(std::strtoul(name.c_str() + dot + 1, nullptr, 10));
}

std::vector<VoidFn> Linker::function_arrays(uint32_t type) const {
  struct Table {
    unsigned priority;
    size_t object, section;
  };
  std::vector<Table> tables;
  for (size_t o = 0; o < objects_.size(); ++o) {
    for (size_t s = 0; s < objects_[o].sections.size(); ++s) {
      if (kept_[o][s] && objects_[o].sections[s].type == type)
        tables.push_back(Table{array_priority(objects_[o].sections[s].name), o, s});
    }
  }
  std::stable_sort(tables.begin(), tables.end(), [](const Table& a, const Table& b) { return a.priority < b.priority; });
  std::vector<VoidFn> out;
  for (const Table& t : tables) {
    const ObjectSection& sec = objects_[t.object].sections[t.section];
    for (uint64_t i = 0; i + 8 <= sec.size; i += 8) {
      const uint64_t entry = image_->read<uint64_t>(section_vaddr_[t.object][t.section] + i, "function array");
      if (entry == 0 || entry == ~uint64_t(0)) continue;
      // Only code inside this image may be called from a table.
      if (!image_->is_executable(entry))
        throw Error("'" + sec.name + "' entry does not point into the image's code").with("member", objects_[t.object].name);
      out.push_back(reinterpret_cast<VoidFn>(entry));
    }
  }
  return out;
}

std::vector<VoidFn> Linker::initializers() const {
  std::vector<VoidFn> out = function_arrays(SHT_PREINIT_ARRAY);
  for (VoidFn fn : function_arrays(SHT_INIT_ARRAY)) out.push_back(fn);
  return out;
}

std::vector<VoidFn> Linker::finalizers() const {
  std::vector<VoidFn> fini = function_arrays(SHT_FINI_ARRAY);
  return std::vector<VoidFn>(fini.rbegin(), fini.rend());
}

}  // namespace

LinkedObjects::LinkedObjects(Key, std::string origin) : origin_(std::move(origin)), state_(std::make_unique<State>()) {}

std::unique_ptr<LinkedObjects> LinkedObjects::link(const std::vector<ElfObject>& objects, const LoadOptions& options,
                                                   const std::string& origin) {
  auto linked = std::make_unique<LinkedObjects>(Key{}, origin);
  try {
    Linker linker(objects, options);
    linker.run(linked->state_.get(), &linked->imports_, &linked->exports_);
    linked->executable_ = options.execute;
    if (options.execute) {
      // Validate every table before running anything.
      const std::vector<VoidFn> init = linker.initializers();
      linked->state_->finalizers = linker.finalizers();
      for (VoidFn fn : init) fn();
      linked->state_->initialized = true;
    }
  } catch (Error& e) {
    throw e.with("file", origin);
  }
  return linked;
}

void LinkedObjects::run_finalizers() noexcept {
  if (!state_ || !state_->initialized) return;
  for (VoidFn fn : state_->finalizers) fn();
  state_->initialized = false;
}

LinkedObjects::~LinkedObjects() { run_finalizers(); }

std::optional<SymbolInfo> LinkedObjects::find_symbol(const std::string& name) const {
  auto it = exports_.find(name);
  if (it == exports_.end()) return std::nullopt;
  return it->second;
}

void* LinkedObjects::symbol(const std::string& name) const {
  auto it = exports_.find(name);
  return it == exports_.end() ? nullptr : it->second.address;
}

std::vector<std::string> LinkedObjects::symbol_names(bool functions_only) const {
  std::vector<std::string> names;
  for (const auto& kv : exports_) {
    if (!functions_only || kv.second.type == STT_FUNC) names.push_back(kv.first);
  }
  return names;
}

bool LinkedObjects::contains(const void* p, size_t n) const { return state_->image.contains_host(p, n); }
size_t LinkedObjects::readable_bytes_from(const void* p, bool writable) const {
  return state_->image.readable_bytes_from(p, writable);
}
std::vector<PageRun> LinkedObjects::page_runs() const { return state_->image.page_runs(); }
bool LinkedObjects::is_code(const void* p) const { return state_->image.is_executable(reinterpret_cast<uint64_t>(p)); }

}  // namespace elf
}  // namespace graphrt
