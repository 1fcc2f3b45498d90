// Concatenations done in place: the liveness plan puts each input of a
// concatenate node inside the node's output, so the kernels producing the
// inputs write their slices of the output and the node has nothing left to do.
//
// A node qualifies only when every input is a contiguous block of its output
// (the axis is the outermost one longer than 1) at a 64-byte aligned offset,
// and no input or output is memory that someone else sees or provides: graph
// inputs, outputs, aliased (__nop) entries, bound params, non-global scopes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graphrt/graph_json.h"

namespace graphrt {

struct InPlaceConcats {
  // Per alias group representative: the group it is placed inside (itself
  // when none) and its byte offset there; placements nest.
  std::vector<uint32_t> host;
  std::vector<size_t> offset_in_host;
  std::vector<bool> node_done_in_place;  // per node: no kernel call needed
};

// `alias_group`: per entry, its representative (alias_groups); `external`:
// per entry (may be empty), memory the caller provides.
InPlaceConcats plan_in_place_concats(const GraphDef& g, const std::vector<uint32_t>& alias_group,
                                     int fallback_device_type, const std::vector<bool>& external);

// True for the functions TVM names after a lone concatenate op
// ("tvmgen_default_fused_concatenate", "..._fused_concatenate_2_1").
bool is_plain_concatenate(const std::string& func_name);

}  // namespace graphrt
