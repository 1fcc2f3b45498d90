// Storage plans: which memory each graph entry lives in.
//
// TVM's plan trusts the graph's storage_id sharing (one pool per id, sized by
// its largest entry). The liveness plan recomputes sharing from tensor
// lifetimes, places concatenations' inputs inside their outputs where it can,
// and packs everything into one arena per device type with offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graphrt/graph_json.h"

namespace graphrt {

struct StoragePlan {
  // entry_buffer of an entry whose memory comes from outside the plan.
  static constexpr size_t kExternal = static_cast<size_t>(-1);
  struct Buffer {
    int device_type = 1;
    size_t bytes = 0;
    bool used = true;  // false: every entry of this storage id is external
  };
  std::vector<Buffer> buffers;        // what to allocate
  std::vector<size_t> entry_buffer;   // per entry: index into buffers
  std::vector<size_t> entry_offset;   // per entry: byte offset in its buffer
  // Per node (empty: none): concatenations the plan did in place
  // (in_place_concat.h); their kernels need not run.
  std::vector<bool> node_done_in_place;
  size_t total_bytes() const;  // of the used buffers
};

// Entries that must share memory no matter the plan: a __nop output and its input.
// Returns, per entry, the representative entry of its alias group.
std::vector<uint32_t> alias_groups(const GraphDef& g);
size_t entry_bytes(const GraphDef& g, size_t entry);
int entry_device_type(const GraphDef& g, size_t entry, int fallback_type);

// `external` (per entry, may be empty): entries whose memory the caller
// provides (bound params). The liveness plan leaves them out; TVM's plan
// leaves out a storage id only when all its entries are external, and keeps
// the others in place (their entry_buffer is then a real buffer).
StoragePlan plan_tvm(const GraphDef& g, int fallback_device_type, const std::vector<bool>& external = {});
StoragePlan plan_liveness(const GraphDef& g, int fallback_device_type, const std::vector<bool>& external = {});

}  // namespace graphrt
