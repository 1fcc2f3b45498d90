// The graph JSON of TVM's graph executor, parsed and validated: the one
// reader of the format (the executor, graphrt-inspect and graphrt-pack use
// it) and a read-only view of a parsed graph (GraphExecutor::graph()).
#pragma once

#include <dlpack/dlpack.h>

#include "graphrt/export.h"

#include <string>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

struct NodeEntry {
  uint32_t node_id = 0;
  uint32_t index = 0;
};

struct GraphNode {
  std::string op;    // "null" or "tvm_op"
  std::string name;
  std::vector<NodeEntry> inputs;
  std::string func_name;  // op nodes: symbol, "__nop" or "__copy"
  uint32_t num_inputs = 0;
  uint32_t num_outputs = 1;
  bool flatten_data = false;
};

struct GraphDef {
  std::vector<GraphNode> nodes;
  std::vector<uint32_t> arg_nodes;
  std::vector<NodeEntry> heads;
  std::vector<uint32_t> node_row_ptr;
  // Per entry:
  std::vector<DLDataType> dtype;
  std::vector<std::vector<int64_t>> shape;
  std::vector<int64_t> storage_id;
  std::vector<int> device_type;  // empty when the graph has no device_index
  std::vector<std::string> storage_scope;

  uint32_t entry_id(uint32_t node_id, uint32_t index) const { return node_row_ptr[node_id] + index; }
  uint32_t entry_id(const NodeEntry& e) const { return entry_id(e.node_id, e.index); }
  size_t num_entries() const { return node_row_ptr.empty() ? 0 : node_row_ptr.back(); }
};

// Parses and validates; every inconsistency is an Error naming the node (index
// and name) or the attribute at fault.
GraphDef parse_graph_json(const std::string& json_text);

}  // namespace graphrt
#pragma GCC visibility pop
