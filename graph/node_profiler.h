// Per-node timing of a graph executor's prepared calls: the profile table and
// trace (GraphExecutor::profile) and the debug executor's per-node times
// (time_node). Kept out of the run loop: a plain run never pays for it.
#pragma once

#include <vector>

#include "graphrt/graph_executor.h"
#include "graphrt/graph_json.h"
#include "graphrt/time_evaluator.h"
#include "op_call.h"

namespace graphrt {

// The ops of one executor as a profile sees them.
struct ProfiledOps {
  const GraphDef& graph;
  std::vector<OpCall>& ops;
  const std::vector<bool>& node_done_in_place;  // per node (empty: none)
  const std::vector<DLDevice>& devices;
  const DeviceApis& apis;  // the executor's
};

// `runs` timed runs of every op (each followed by a device synchronize); rows
// in node order, in-place concatenations included. Warm-up runs are the
// caller's (its own run loop).
ProfileReport profile_ops(const ProfiledOps& p, int runs);

// The repeats of graph node `node`'s op (zeros when the node has none).
std::vector<double> time_node_op(const ProfiledOps& p, int node, const TimingOptions& options);

}  // namespace graphrt
