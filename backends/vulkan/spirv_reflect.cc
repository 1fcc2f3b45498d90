#include "backends/vulkan/spirv_reflect.h"

#include <algorithm>
#include <unordered_map>

#include "graphrt/error.h"

namespace graphrt {
namespace vulkan_backend {

namespace {

// The SPIR-V opcodes, decorations and storage classes read here (the
// specification's numbers).
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpTypeInt = 21;
constexpr uint32_t kOpTypeFloat = 22;
constexpr uint32_t kOpTypeVector = 23;
constexpr uint32_t kOpTypeStruct = 30;
constexpr uint32_t kOpTypePointer = 32;
constexpr uint32_t kOpVariable = 59;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kOpMemberDecorate = 72;
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kDecorationBlock = 2;
constexpr uint32_t kDecorationBufferBlock = 3;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kDecorationOffset = 35;
constexpr uint32_t kStorageUniform = 2;
constexpr uint32_t kStoragePushConstant = 9;
constexpr uint32_t kStorageStorageBuffer = 12;
constexpr size_t kHeaderWords = 5;

struct Variable {
  uint32_t pointer_type = 0;
  uint32_t storage = 0;
};

struct Tables {
  std::unordered_map<uint32_t, uint32_t> binding, set;
  std::unordered_map<uint32_t, uint32_t> block_kind;          // struct id -> Block / BufferBlock
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> pointer;  // id -> (storage, pointee)
  std::unordered_map<uint32_t, std::vector<uint32_t>> struct_members;  // id -> member type ids
  std::unordered_map<uint64_t, uint32_t> member_offset;        // (struct << 32 | member) -> offset
  std::unordered_map<uint32_t, uint32_t> scalar_bytes;        // int/float/vector type id -> bytes
  std::unordered_map<uint32_t, uint32_t> entry_ids;           // function id -> index in names
  std::vector<std::pair<std::string, SpirvEntryPoint>> entries;
  std::vector<std::pair<uint32_t, Variable>> variables;
};

// A literal string operand starting at words[at] within [at, end).
std::string literal_string(const std::vector<uint32_t>& words, size_t at, size_t end, size_t* next) {
  std::string s;
  size_t i = at;
  for (; i < end; ++i) {
    uint32_t w = words[i];
    bool done = false;
    for (int b = 0; b < 4; ++b) {
      char c = static_cast<char>((w >> (8 * b)) & 0xff);
      if (c == '\0') {
        done = true;
        break;
      }
      s.push_back(c);
    }
    if (done) {
      ++i;
      break;
    }
  }
  *next = i;
  return s;
}

void read_instruction(const std::vector<uint32_t>& w, size_t at, size_t end, uint32_t op, Tables& t) {
  const size_t n = end - at;  // operand words
  switch (op) {
    case kOpEntryPoint:
      if (n >= 3) {
        SpirvEntryPoint ep;
        ep.execution_model = w[at];
        size_t next = 0;
        std::string name = literal_string(w, at + 2, end, &next);
        t.entry_ids[w[at + 1]] = static_cast<uint32_t>(t.entries.size());
        t.entries.emplace_back(name, ep);
      }
      break;
    case kOpExecutionMode:
      if (n >= 5 && w[at + 1] == kModeLocalSize) {
        auto it = t.entry_ids.find(w[at]);
        if (it != t.entry_ids.end()) std::copy(&w[at + 2], &w[at + 5], t.entries[it->second].second.local_size);
      }
      break;
    case kOpDecorate:
      if (n >= 3 && w[at + 1] == kDecorationBinding) t.binding[w[at]] = w[at + 2];
      if (n >= 3 && w[at + 1] == kDecorationDescriptorSet) t.set[w[at]] = w[at + 2];
      if (n >= 2 && (w[at + 1] == kDecorationBlock || w[at + 1] == kDecorationBufferBlock)) t.block_kind[w[at]] = w[at + 1];
      break;
    case kOpMemberDecorate:
      if (n >= 4 && w[at + 2] == kDecorationOffset)
        t.member_offset[(static_cast<uint64_t>(w[at]) << 32) | w[at + 1]] = w[at + 3];
      break;
    case kOpTypeInt:
    case kOpTypeFloat:
      if (n >= 2) t.scalar_bytes[w[at]] = w[at + 1] / 8;
      break;
    case kOpTypeVector:
      if (n >= 3 && t.scalar_bytes.count(w[at + 1])) t.scalar_bytes[w[at]] = t.scalar_bytes[w[at + 1]] * w[at + 2];
      break;
    case kOpTypeStruct:
      if (n >= 1) t.struct_members[w[at]] = std::vector<uint32_t>(w.begin() + at + 1, w.begin() + end);
      break;
    case kOpTypePointer:
      if (n >= 3) t.pointer[w[at]] = {w[at + 1], w[at + 2]};
      break;
    case kOpVariable:
      if (n >= 3) t.variables.push_back({w[at + 1], Variable{w[at], w[at + 2]}});
      break;
    default:
      break;
  }
}

// The byte size of a push-constant block: the end of its last member.
uint32_t block_bytes(const Tables& t, uint32_t struct_id) {
  auto members = t.struct_members.find(struct_id);
  if (members == t.struct_members.end()) return 0;
  uint32_t size = 0;
  for (size_t m = 0; m < members->second.size(); ++m) {
    auto offset = t.member_offset.find((static_cast<uint64_t>(struct_id) << 32) | m);
    auto bytes = t.scalar_bytes.find(members->second[m]);
    uint32_t end = (offset == t.member_offset.end() ? 0 : offset->second) +
                   (bytes == t.scalar_bytes.end() ? 8 : bytes->second);
    size = std::max(size, end);
  }
  return size;
}

}  // namespace

SpirvInterface reflect_spirv(const std::vector<uint32_t>& words) {
  if (words.size() < kHeaderWords || words[0] != 0x07230203)
    throw Error("not a SPIR-V module (" + std::to_string(words.size()) + " words, no 0x07230203 magic first)");
  Tables t;
  for (size_t at = kHeaderWords; at < words.size();) {
    uint32_t count = words[at] >> 16;
    uint32_t op = words[at] & 0xffff;
    if (count == 0 || at + count > words.size())
      throw Error("SPIR-V instruction at word " + std::to_string(at) + " runs past the module's end");
    read_instruction(words, at + 1, at + count, op, t);
    at += count;
  }
  SpirvInterface out;
  for (auto& e : t.entries) out.entry_points.emplace(e.first, e.second);
  for (const auto& v : t.variables) {
    auto ptr = t.pointer.find(v.second.pointer_type);
    uint32_t pointee = ptr == t.pointer.end() ? 0 : ptr->second.second;
    if (v.second.storage == kStoragePushConstant) {
      out.push_constant_bytes = std::max(out.push_constant_bytes, block_bytes(t, pointee));
      continue;
    }
    auto binding = t.binding.find(v.first);
    if (binding == t.binding.end()) continue;
    SpirvBinding b;
    b.binding = binding->second;
    auto set = t.set.find(v.first);
    b.set = set == t.set.end() ? 0 : set->second;
    auto block = t.block_kind.find(pointee);
    if (v.second.storage == kStorageStorageBuffer) {
      b.kind = BindingKind::kStorageBuffer;
    } else if (v.second.storage == kStorageUniform && block != t.block_kind.end()) {
      b.kind = block->second == kDecorationBufferBlock ? BindingKind::kStorageBuffer : BindingKind::kUniformBuffer;
    }
    out.bindings.push_back(b);
  }
  return out;
}

}  // namespace vulkan_backend
}  // namespace graphrt
