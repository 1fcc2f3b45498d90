#include "backends/vm/bytecode/binary_format.h"

#include <cstring>
#include <string>

#include "graphrt/error.h"

namespace graphrt {
namespace vm {
namespace {

class Writer {
 public:
  void u16(uint16_t v) { raw(&v, 2); }
  void u32(uint32_t v) { raw(&v, 4); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void bytes(const std::vector<uint8_t>& b) {
    u32(static_cast<uint32_t>(b.size()));
    raw(b.data(), b.size());
  }
  // The host is little-endian (x86-64/aarch64), so raw copies are the format.
  void raw(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint16_t u16() { uint16_t v; raw(&v, 2); return v; }
  uint32_t u32() { uint32_t v; raw(&v, 4); return v; }
  std::string str() {
    const uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::vector<uint8_t> bytes() {
    const uint32_t n = u32();
    need(n);
    std::vector<uint8_t> b(data_ + pos_, data_ + pos_ + n);
    pos_ += n;
    return b;
  }
  // Element count of a table; each element takes at least `min_bytes`, which
  // rejects absurd counts before anything is allocated.
  uint32_t count(size_t min_bytes) {
    const uint32_t n = u32();
    if (static_cast<uint64_t>(n) * min_bytes > size_ - pos_) fail("table count exceeds the data");
    return n;
  }
  size_t pos() const { return pos_; }
  bool done() const { return pos_ == size_; }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("malformed VM bytecode container: " + why).with("offset", std::to_string(pos_));
  }

 private:
  void need(size_t n) {
    if (n > size_ - pos_) fail("truncated");
  }
  void raw(void* out, size_t n) {
    need(n);
    std::memcpy(out, data_ + pos_, n);
    pos_ += n;
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

FunctionDef read_function(Reader& r) {
  FunctionDef f;
  f.name = r.str();
  f.signature = r.str();
  f.exported = (r.u32() & 1u) != 0;
  for (uint16_t& count : f.registers) count = r.u16();
  f.code = r.bytes();
  return f;
}

}  // namespace

bool has_bytecode_magic(const uint8_t* data, size_t size) {
  return size >= 4 && std::memcmp(data, kBytecodeMagic, 4) == 0;
}

static uint32_t format_version_needed(const ModuleDef& def) {
  if (!def.globals.empty()) return 2;
  for (const Dependency& d : def.dependencies) {
    if (!d.source.empty()) return 2;
  }
  return 1;
}

std::vector<uint8_t> write_module_def(const ModuleDef& def) {
  const uint32_t version = format_version_needed(def);
  Writer w;
  w.raw(kBytecodeMagic, 4);
  w.u32(version);
  w.str(def.name);
  w.u32(def.version);
  w.u32(static_cast<uint32_t>(def.dependencies.size()));
  for (const Dependency& d : def.dependencies) {
    w.str(d.name);
    w.u32(d.min_version);
    w.u32(d.optional ? 1u : 0u);
    if (version >= 2) w.str(d.source);
  }
  w.u32(static_cast<uint32_t>(def.imports.size()));
  for (const ImportDecl& i : def.imports) {
    w.str(i.full_name);
    w.str(i.signature);
    w.u32(i.optional ? 1u : 0u);
  }
  w.u32(static_cast<uint32_t>(def.rodata.size()));
  for (const std::string& s : def.rodata) w.str(s);
  if (version >= 2) {
    w.u32(static_cast<uint32_t>(def.globals.size()));
    for (const GlobalDef& g : def.globals) {
      w.str(g.name);
      w.u32(static_cast<uint32_t>(g.type));
    }
  }
  w.u32(static_cast<uint32_t>(def.functions.size()));
  for (const FunctionDef& f : def.functions) {
    w.str(f.name);
    w.str(f.signature);
    w.u32(f.exported ? 1u : 0u);
    for (uint16_t count : f.registers) w.u16(count);
    w.bytes(f.code);
  }
  return std::move(w.out);
}

ModuleDef read_module_def(const uint8_t* data, size_t size) {
  Reader r(data, size);
  if (!has_bytecode_magic(data, size)) r.fail("missing GRVM magic");
  r.u32();
  const uint32_t version = r.u32();
  if (version < 1 || version > kBytecodeVersion) {
    r.fail("unsupported format version " + std::to_string(version) + " (runtime supports " +
           std::to_string(kBytecodeVersion) + ")");
  }
  ModuleDef def;
  def.name = r.str();
  def.version = r.u32();
  for (uint32_t n = r.count(version >= 2 ? 16 : 12); n > 0; --n) {
    Dependency d;
    d.name = r.str();
    d.min_version = r.u32();
    d.optional = (r.u32() & 1u) != 0;
    if (version >= 2) d.source = r.str();
    def.dependencies.push_back(d);
  }
  for (uint32_t n = r.count(12); n > 0; --n) {
    ImportDecl i;
    i.full_name = r.str();
    i.signature = r.str();
    i.optional = (r.u32() & 1u) != 0;
    def.imports.push_back(i);
  }
  for (uint32_t n = r.count(4); n > 0; --n) def.rodata.push_back(r.str());
  for (uint32_t n = version >= 2 ? r.count(8) : 0; n > 0; --n) {
    GlobalDef g;
    g.name = r.str();
    const uint32_t type = r.u32();
    if (type >= static_cast<uint32_t>(kValueTypeCount)) r.fail("global type " + std::to_string(type) + " unknown");
    g.type = static_cast<ValueType>(type);
    def.globals.push_back(g);
  }
  for (uint32_t n = r.count(26); n > 0; --n) def.functions.push_back(read_function(r));
  if (!r.done()) r.fail("trailing bytes after the function table");
  return def;
}

}  // namespace vm
}  // namespace graphrt
