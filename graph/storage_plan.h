// Storage plans: which memory each graph entry lives in.
//
// TVM's plan trusts the graph's storage_id sharing (one pool per id, sized by
// its largest entry). The liveness plan recomputes sharing from tensor
// lifetimes and packs everything into one arena per device type with offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph_json.h"

namespace graphrt {

struct StoragePlan {
  struct Buffer {
    int device_type = 1;
    size_t bytes = 0;
  };
  std::vector<Buffer> buffers;        // what to allocate
  std::vector<size_t> entry_buffer;   // per entry: index into buffers
  std::vector<size_t> entry_offset;   // per entry: byte offset in its buffer
  size_t total_bytes() const;
};

// Entries that must share memory no matter the plan: a __nop output and its input.
// Returns, per entry, the representative entry of its alias group.
std::vector<uint32_t> alias_groups(const GraphDef& g);
size_t entry_bytes(const GraphDef& g, size_t entry);
int entry_device_type(const GraphDef& g, size_t entry, int fallback_type);

StoragePlan plan_tvm(const GraphDef& g, int fallback_device_type);
StoragePlan plan_liveness(const GraphDef& g, int fallback_device_type);

}  // namespace graphrt
