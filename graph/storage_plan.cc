#include "storage_plan.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "in_place_concat.h"

namespace graphrt {

namespace {
constexpr size_t kAlignment = 64;
size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

uint32_t find_root(std::vector<uint32_t>& parent, uint32_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}
}  // namespace

size_t StoragePlan::total_bytes() const {
  size_t total = 0;
  for (const Buffer& b : buffers) total += b.used ? b.bytes : 0;
  return total;
}

size_t entry_bytes(const GraphDef& g, size_t entry) {
  const auto& shape = g.shape[entry];
  return dtype_bytes(g.dtype[entry], shape_numel(shape.data(), static_cast<int>(shape.size())));
}

int entry_device_type(const GraphDef& g, size_t entry, int fallback_type) {
  return g.device_type.empty() ? fallback_type : g.device_type[entry];
}

std::vector<uint32_t> alias_groups(const GraphDef& g) {
  std::vector<uint32_t> parent(g.num_entries());
  std::iota(parent.begin(), parent.end(), 0);
  for (size_t nid = 0; nid < g.nodes.size(); ++nid) {
    const GraphNode& node = g.nodes[nid];
    if (node.op != "tvm_op" || node.func_name != "__nop" || node.inputs.empty()) continue;
    uint32_t in = find_root(parent, g.entry_id(node.inputs[0]));
    uint32_t out = find_root(parent, g.entry_id(static_cast<uint32_t>(nid), 0));
    parent[out] = in;
  }
  for (uint32_t e = 0; e < parent.size(); ++e) parent[e] = find_root(parent, e);
  return parent;
}

StoragePlan plan_tvm(const GraphDef& g, int fallback_device_type, const std::vector<bool>& external) {
  StoragePlan plan;
  size_t entries = g.num_entries();
  // One buffer per storage id in use, numbered densely: ids are the file's
  // word, and a sparse or huge one must not make buffers nothing uses.
  std::vector<int64_t> used_ids(g.storage_id.begin(), g.storage_id.end());
  std::sort(used_ids.begin(), used_ids.end());
  used_ids.erase(std::unique(used_ids.begin(), used_ids.end()), used_ids.end());
  plan.buffers.resize(used_ids.size());
  std::vector<bool> typed(plan.buffers.size(), false);
  plan.entry_buffer.resize(entries);
  plan.entry_offset.assign(entries, 0);
  for (size_t e = 0; e < entries; ++e) {
    const int64_t storage_id = g.storage_id[e];
    size_t sid = static_cast<size_t>(std::lower_bound(used_ids.begin(), used_ids.end(), storage_id) - used_ids.begin());
    int type = entry_device_type(g, e, fallback_device_type);
    if (typed[sid] && plan.buffers[sid].device_type != type)
      throw Error("storage_id " + std::to_string(storage_id) + " is shared by entries on device types " +
                  std::to_string(plan.buffers[sid].device_type) + " and " + std::to_string(type))
          .with("entry", std::to_string(e));
    typed[sid] = true;
    plan.buffers[sid].device_type = type;
    // TVM allocates float32 arrays of ceil(bytes/4) elements: round to 4.
    size_t bytes = (entry_bytes(g, e) + 3) / 4 * 4;
    plan.buffers[sid].bytes = std::max(plan.buffers[sid].bytes, bytes);
    plan.entry_buffer[e] = sid;
  }
  if (!external.empty()) {
    // An entry stays external only if its whole storage id and its whole
    // alias group are: grow the internal set until both agree.
    std::vector<uint32_t> group = alias_groups(g);
    std::vector<bool> internal_sid(plan.buffers.size(), false), internal_group(entries, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t e = 0; e < entries; ++e) {
        bool internal = !external[e] || internal_sid[plan.entry_buffer[e]] || internal_group[group[e]];
        if (internal && !(internal_sid[plan.entry_buffer[e]] && internal_group[group[e]])) {
          internal_sid[plan.entry_buffer[e]] = internal_group[group[e]] = true;
          changed = true;
        }
      }
    }
    for (size_t sid = 0; sid < plan.buffers.size(); ++sid) plan.buffers[sid].used = internal_sid[sid];
    for (size_t e = 0; e < entries; ++e) {
      if (!internal_sid[plan.entry_buffer[e]]) plan.entry_buffer[e] = StoragePlan::kExternal;
    }
  }
  return plan;
}

namespace {
struct Interval {
  uint32_t group;
  size_t bytes;
  size_t first, last;  // node indices where the group is live
  int device_type;
  size_t offset = 0;
};

// `root`/`offset`: per entry, the group whose memory it is in and where.
std::vector<Interval> group_intervals(const GraphDef& g, const std::vector<uint32_t>& root,
                                      const std::vector<size_t>& offset, int fallback,
                                      const std::vector<bool>& external) {
  size_t n = g.nodes.size();
  std::map<uint32_t, Interval> by_group;
  auto touch = [&](uint32_t entry, size_t nid) {
    uint32_t group = root[entry];
    if (!external.empty() && external[group]) return;
    auto it = by_group.find(group);
    int type = entry_device_type(g, entry, fallback);
    size_t end = offset[entry] + entry_bytes(g, entry);
    if (it == by_group.end()) {
      by_group.emplace(group, Interval{group, end, nid, nid, type});
      return;
    }
    if (it->second.device_type != type)
      throw Error("aliased entries live on different device types").with("entry", std::to_string(entry));
    it->second.bytes = std::max(it->second.bytes, end);
    it->second.first = std::min(it->second.first, nid);
    it->second.last = std::max(it->second.last, nid);
  };
  for (size_t nid = 0; nid < n; ++nid) {
    for (uint32_t i = 0; i < g.node_row_ptr[nid + 1] - g.node_row_ptr[nid]; ++i)
      touch(g.entry_id(static_cast<uint32_t>(nid), i), nid);
    for (const NodeEntry& in : g.nodes[nid].inputs) touch(g.entry_id(in), nid);
  }
  // Inputs, parameters and outputs stay valid outside run(): live throughout.
  auto live_throughout = [&](uint32_t entry) {
    auto it = by_group.find(root[entry]);
    if (it == by_group.end()) return;  // external
    it->second.first = 0;
    it->second.last = n;
  };
  for (uint32_t a : g.arg_nodes) live_throughout(g.entry_id(a, 0));
  for (const NodeEntry& h : g.heads) live_throughout(g.entry_id(h));
  std::vector<Interval> out;
  for (auto& kv : by_group) out.push_back(kv.second);
  return out;
}

// Greedy offset assignment: largest first, at the lowest 64-byte aligned
// offset that does not overlap any placed interval live at the same time.
// Sizes are exact (only offsets are aligned), so small tensors pack densely.
size_t place(std::vector<Interval*>& items) {
  std::sort(items.begin(), items.end(), [](const Interval* a, const Interval* b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : a->group < b->group;
  });
  std::vector<Interval*> placed;
  size_t arena = 0;
  for (Interval* item : items) {
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Interval* p : placed) {
      if (p->first <= item->last && item->first <= p->last) busy.emplace_back(p->offset, p->offset + p->bytes);
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& b : busy) {
      if (offset + item->bytes <= b.first) break;
      offset = std::max(offset, align_up(b.second));
    }
    item->offset = offset;
    arena = std::max(arena, offset + item->bytes);
    placed.push_back(item);
  }
  return arena;
}

// Per entry: the group whose memory holds it (its alias group's outermost
// in-place host) and its byte offset there.
void resolve_placement(const std::vector<uint32_t>& alias_group, const InPlaceConcats& placed,
                       std::vector<uint32_t>* root, std::vector<size_t>* offset) {
  size_t entries = alias_group.size();
  root->resize(entries);
  offset->assign(entries, 0);
  for (size_t e = 0; e < entries; ++e) {
    uint32_t group = alias_group[e];
    size_t at = 0;
    while (placed.host[group] != group) {
      at += placed.offset_in_host[group];
      group = placed.host[group];
    }
    (*root)[e] = group;
    (*offset)[e] = at;
  }
}
}  // namespace

StoragePlan plan_liveness(const GraphDef& g, int fallback_device_type, const std::vector<bool>& external) {
  std::vector<uint32_t> group = alias_groups(g);
  InPlaceConcats placed = plan_in_place_concats(g, group, fallback_device_type, external);
  std::vector<uint32_t> root;
  std::vector<size_t> offset_in_root;
  resolve_placement(group, placed, &root, &offset_in_root);
  std::vector<bool> external_root;
  if (!external.empty()) {
    // Whole alias groups are external (the caller marks them), and no
    // external group is placed inside another.
    external_root.assign(g.num_entries(), false);
    for (size_t e = 0; e < external.size(); ++e) {
      if (external[e]) external_root[root[e]] = true;
    }
  }
  std::vector<Interval> intervals = group_intervals(g, root, offset_in_root, fallback_device_type, external_root);
  std::map<int, std::vector<Interval*>> by_device;
  for (Interval& iv : intervals) by_device[iv.device_type].push_back(&iv);
  StoragePlan plan;
  std::map<int, size_t> buffer_of_device;
  for (auto& kv : by_device) {
    size_t arena = place(kv.second);
    buffer_of_device[kv.first] = plan.buffers.size();
    plan.buffers.push_back(StoragePlan::Buffer{kv.first, std::max<size_t>(arena, 4)});
  }
  std::map<uint32_t, const Interval*> of_root;
  for (const Interval& iv : intervals) of_root[iv.group] = &iv;
  size_t entries = g.num_entries();
  plan.entry_buffer.resize(entries);
  plan.entry_offset.resize(entries);
  // group_intervals touched every entry (each is some node's output), so
  // every root that is not external has an interval.
  for (size_t e = 0; e < entries; ++e) {
    if (!external_root.empty() && external_root[root[e]]) {
      plan.entry_buffer[e] = StoragePlan::kExternal;
      plan.entry_offset[e] = 0;
      continue;
    }
    const Interval* iv = of_root.at(root[e]);
    plan.entry_buffer[e] = buffer_of_device.at(iv->device_type);
    plan.entry_offset[e] = iv->offset + offset_in_root[e];
  }
  plan.node_done_in_place = std::move(placed.node_done_in_place);
  return plan;
}

}  // namespace graphrt
