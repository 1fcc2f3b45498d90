#include "in_place_concat.h"

#include <dlpack/dlpack.h>

#include <cctype>
#include <string>

#include "graphrt/ndarray.h"
#include "storage_plan.h"

namespace graphrt {

namespace {

// TVM's kernels assume their tensors' data is aligned to its allocation
// alignment (64 bytes): a slice must start on such a boundary.
constexpr size_t kSliceAlignment = 64;

struct EntryRoles {
  std::vector<bool> graph_io;     // graph inputs and outputs: seen or provided outside run()
  std::vector<uint32_t> members;  // per group representative: entries in the group
};

EntryRoles entry_roles(const GraphDef& g, const std::vector<uint32_t>& alias_group) {
  EntryRoles roles;
  roles.graph_io.assign(g.num_entries(), false);
  roles.members.assign(g.num_entries(), 0);
  for (uint32_t a : g.arg_nodes) roles.graph_io[alias_group[g.entry_id(a, 0)]] = true;
  for (const NodeEntry& h : g.heads) roles.graph_io[alias_group[g.entry_id(h)]] = true;
  for (size_t e = 0; e < g.num_entries(); ++e) ++roles.members[alias_group[e]];
  return roles;
}

bool plain_memory(const GraphDef& g, size_t entry, int fallback_device_type, const std::vector<bool>& external) {
  bool global = g.storage_scope.empty() || g.storage_scope[entry].empty() || g.storage_scope[entry] == "global";
  return global && entry_device_type(g, entry, fallback_device_type) == kDLCPU &&
         (external.empty() || !external[entry]);
}

// The byte offset of each input inside the output, or empty when the inputs
// are not contiguous aligned blocks of it.
std::vector<size_t> slice_offsets(const GraphDef& g, const GraphNode& node, uint32_t out) {
  const std::vector<int64_t>& out_shape = g.shape[out];
  const std::vector<int64_t>& first = g.shape[g.entry_id(node.inputs[0])];
  if (first.size() != out_shape.size()) return {};
  size_t axis = 0;
  while (axis < out_shape.size() && first[axis] == out_shape[axis]) ++axis;
  if (axis == out_shape.size()) return {};
  for (size_t d = 0; d < axis; ++d)
    if (out_shape[d] != 1) return {};
  // Crafted shapes can overflow: such a node is simply left to its kernel
  // (the planner reports the size itself).
  int64_t inner = 1;
  for (size_t d = axis + 1; d < out_shape.size(); ++d)
    if (__builtin_mul_overflow(inner, out_shape[d], &inner)) return {};
  if (g.dtype[out].bits % 8 != 0) return {};
  size_t row_bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(g.dtype[out].bits / 8) * g.dtype[out].lanes,
                             static_cast<size_t>(inner), &row_bytes))
    return {};
  std::vector<size_t> offsets;
  int64_t along = 0;
  for (const NodeEntry& in : node.inputs) {
    uint32_t e = g.entry_id(in);
    const std::vector<int64_t>& shape = g.shape[e];
    if (shape.size() != out_shape.size() || !(g.dtype[e] == g.dtype[out]) || shape[axis] <= 0) return {};
    for (size_t d = 0; d < shape.size(); ++d)
      if (d != axis && shape[d] != out_shape[d]) return {};
    size_t offset = 0;
    if (__builtin_mul_overflow(static_cast<size_t>(along), row_bytes, &offset) || offset % kSliceAlignment != 0)
      return {};
    offsets.push_back(offset);
    if (__builtin_add_overflow(along, shape[axis], &along)) return {};
  }
  if (along != out_shape[axis]) return {};
  return offsets;
}

}  // namespace

bool is_plain_concatenate(const std::string& func_name) {
  static const std::string kOp = "fused_concatenate";
  size_t at = func_name.rfind(kOp);
  if (at == std::string::npos || (at != 0 && func_name[at - 1] != '_')) return false;
  // What follows may only be TVM's "_<n>" suffixes for functions of the same name.
  for (size_t i = at + kOp.size(); i < func_name.size(); ++i) {
    char c = func_name[i];
    if (c == '_' ? i + 1 == func_name.size() || func_name[i + 1] == '_' : !std::isdigit(static_cast<unsigned char>(c)))
      return false;
  }
  return true;
}

InPlaceConcats plan_in_place_concats(const GraphDef& g, const std::vector<uint32_t>& alias_group,
                                     int fallback_device_type, const std::vector<bool>& external) {
  InPlaceConcats placed;
  size_t entries = g.num_entries();
  placed.host.resize(entries);
  for (uint32_t e = 0; e < entries; ++e) placed.host[e] = e;
  placed.offset_in_host.assign(entries, 0);
  placed.node_done_in_place.assign(g.nodes.size(), false);
  EntryRoles roles = entry_roles(g, alias_group);
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    const GraphNode& node = g.nodes[nid];
    if (node.op != "tvm_op" || node.num_outputs != 1 || node.inputs.size() < 2 || !is_plain_concatenate(node.func_name))
      continue;
    uint32_t out = g.entry_id(nid, 0);
    uint32_t out_group = alias_group[out];
    if (roles.graph_io[out_group] || !plain_memory(g, out, fallback_device_type, external)) continue;
    std::vector<size_t> offsets = slice_offsets(g, node, out);
    if (offsets.empty()) continue;
    bool placeable = true;
    for (size_t i = 0; i < node.inputs.size() && placeable; ++i) {
      uint32_t in = g.entry_id(node.inputs[i]);
      const GraphNode& producer = g.nodes[node.inputs[i].node_id];
      placeable = producer.op == "tvm_op" && producer.func_name != "__nop" && alias_group[in] == in &&
                  roles.members[in] == 1 && !roles.graph_io[in] && placed.host[in] == in && in != out_group &&
                  plain_memory(g, in, fallback_device_type, external);
      for (size_t j = 0; j < i && placeable; ++j) placeable = g.entry_id(node.inputs[j]) != in;
    }
    if (!placeable) continue;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      uint32_t in = g.entry_id(node.inputs[i]);
      placed.host[in] = out_group;
      placed.offset_in_host[in] = offsets[i];
    }
    placed.node_done_in_place[nid] = true;
  }
  return placed;
}

}  // namespace graphrt
