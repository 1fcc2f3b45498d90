#include "graphrt/graph_json.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"

namespace graphrt {

namespace {

using json = nlohmann::json;

Error node_error(const GraphDef& g, size_t nid, const std::string& message) {
  std::string name = nid < g.nodes.size() ? g.nodes[nid].name : "";
  return Error("graph node " + std::to_string(nid) + " '" + name + "': " + message)
      .with("node", std::to_string(nid) + " (" + name + ")");
}

uint32_t as_u32(const json& v, const std::string& what) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 0xFFFFFFFFLL)
    throw Error("graph JSON: " + what + " must be a non-negative integer, got " + v.dump());
  return static_cast<uint32_t>(v.get<int64_t>());
}

NodeEntry parse_entry(const json& v, const std::string& what) {
  if (!v.is_array() || v.size() < 2 || v.size() > 3)
    throw Error("graph JSON: " + what + " must be [node_id, index(, version)], got " + v.dump());
  return NodeEntry{as_u32(v[0], what + " node id"), as_u32(v[1], what + " index")};
}

uint32_t parse_count_attr(const GraphDef& g, size_t nid, const json& attrs, const char* key) {
  const json& v = attrs.at(key);
  std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  try {
    size_t used = 0;
    long long n = std::stoll(text, &used);
    if (used != text.size() || n < 0 || n > 1000000) throw std::invalid_argument(text);
    return static_cast<uint32_t>(n);
  } catch (const std::exception&) {
    throw node_error(g, nid, std::string("attribute ") + key + " is not a count: " + text);
  }
}

void parse_node(GraphDef& g, size_t nid, const json& n) {
  if (!n.is_object()) throw node_error(g, nid, "node is not an object");
  GraphNode node;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string& key = it.key();
    if (key == "op") node.op = it->get<std::string>();
    else if (key == "name") node.name = it->get<std::string>();
    else if (key == "inputs") {
      if (!it->is_array()) throw node_error(g, nid, "inputs is not an array");
      for (const json& e : *it) node.inputs.push_back(parse_entry(e, "node input"));
    } else if (key != "attrs" && key != "attr" && key != "control_deps") {
      g.nodes.push_back(node);
      throw node_error(g, nid, "unknown node key '" + key + "'");
    }
  }
  g.nodes.push_back(node);
  GraphNode& stored = g.nodes.back();
  if (!n.contains("op") || !n.contains("name")) throw node_error(g, nid, "node needs 'op' and 'name'");
  if (stored.op == "null") return;
  if (stored.op != "tvm_op") throw node_error(g, nid, "unknown op '" + stored.op + "' (expected null or tvm_op)");
  const json* attrs = n.contains("attrs") ? &n.at("attrs") : (n.contains("attr") ? &n.at("attr") : nullptr);
  if (!attrs || !attrs->is_object()) throw node_error(g, nid, "tvm_op node has no attrs");
  for (const char* key : {"func_name", "num_inputs", "num_outputs", "flatten_data"}) {
    if (!attrs->contains(key)) throw node_error(g, nid, std::string("missing attribute '") + key + "'");
  }
  if (!attrs->at("func_name").is_string()) throw node_error(g, nid, "func_name is not a string");
  stored.func_name = attrs->at("func_name").get<std::string>();
  stored.num_inputs = parse_count_attr(g, nid, *attrs, "num_inputs");
  stored.num_outputs = parse_count_attr(g, nid, *attrs, "num_outputs");
  stored.flatten_data = parse_count_attr(g, nid, *attrs, "flatten_data") != 0;
}

template <typename T, typename F>
std::vector<T> parse_attr_list(const json& attrs, const char* key, const char* tag, F convert) {
  const json& v = attrs.at(key);
  if (!v.is_array() || v.size() != 2 || !v[0].is_string() || v[0].get<std::string>() != tag || !v[1].is_array())
    throw Error(std::string("graph JSON: attrs.") + key + " must be [\"" + tag + "\", [...]]").with("attribute", key);
  std::vector<T> out;
  out.reserve(v[1].size());
  for (size_t i = 0; i < v[1].size(); ++i) {
    try {
      out.push_back(convert(v[1][i]));
    } catch (Error& e) {
      throw e.with("attribute", std::string(key) + "[" + std::to_string(i) + "]");
    } catch (const std::exception& e) {
      throw Error(std::string("graph JSON: bad value in attrs.") + key + ": " + v[1][i].dump())
          .with("attribute", std::string(key) + "[" + std::to_string(i) + "]");
    }
  }
  return out;
}

void parse_attrs(GraphDef& g, const json& attrs) {
  if (!attrs.is_object()) throw Error("graph JSON: attrs is not an object");
  for (const char* key : {"dltype", "shape", "storage_id"}) {
    if (!attrs.contains(key)) throw Error(std::string("graph JSON: attrs has no '") + key + "'").with("attribute", key);
  }
  g.dtype = parse_attr_list<DLDataType>(attrs, "dltype", "list_str",
                                        [](const json& v) { return dtype_from_string(v.get<std::string>()); });
  g.shape = parse_attr_list<std::vector<int64_t>>(attrs, "shape", "list_shape", [](const json& v) {
    std::vector<int64_t> s = v.get<std::vector<int64_t>>();
    for (int64_t d : s) {
      if (d < 0) throw Error("negative dimension in shape " + v.dump());
    }
    return s;
  });
  g.storage_id = parse_attr_list<int64_t>(attrs, "storage_id", "list_int", [](const json& v) {
    int64_t sid = v.get<int64_t>();
    if (sid < 0) throw Error("negative storage_id");
    return sid;
  });
  if (attrs.contains("device_index"))
    g.device_type = parse_attr_list<int>(attrs, "device_index", "list_int", [](const json& v) {
      int t = v.get<int>();
      if (t <= 0) throw Error("device_index must be a DLDeviceType (> 0)");
      return t;
    });
  if (attrs.contains("storage_scope"))
    g.storage_scope = parse_attr_list<std::string>(attrs, "storage_scope", "list_str",
                                                   [](const json& v) { return v.get<std::string>(); });
}

void validate(GraphDef& g) {
  size_t n = g.nodes.size();
  if (g.node_row_ptr.size() != n + 1)
    throw Error("graph JSON: node_row_ptr has " + std::to_string(g.node_row_ptr.size()) + " entries for " +
                std::to_string(n) + " nodes (expected " + std::to_string(n + 1) + ")");
  if (g.node_row_ptr[0] != 0) throw Error("graph JSON: node_row_ptr[0] must be 0");
  for (size_t nid = 0; nid < n; ++nid) {
    const GraphNode& node = g.nodes[nid];
    if (g.node_row_ptr[nid + 1] < g.node_row_ptr[nid]) throw node_error(g, nid, "node_row_ptr decreases");
    uint32_t outputs = g.node_row_ptr[nid + 1] - g.node_row_ptr[nid];
    uint32_t expected = node.op == "null" ? 1 : node.num_outputs;
    if (outputs != expected)
      throw node_error(g, nid, "node_row_ptr gives " + std::to_string(outputs) + " outputs but the node has " +
                                   std::to_string(expected));
    if (node.op == "null" && !node.inputs.empty()) throw node_error(g, nid, "input node has inputs");
    for (const NodeEntry& e : node.inputs) {
      if (e.node_id >= nid)
        throw node_error(g, nid, "input refers to node " + std::to_string(e.node_id) + ", which does not come before it");
      if (e.index >= g.node_row_ptr[e.node_id + 1] - g.node_row_ptr[e.node_id])
        throw node_error(g, nid, "input refers to output " + std::to_string(e.index) + " of node " +
                                     std::to_string(e.node_id) + ", which has fewer outputs");
    }
    if (node.func_name == "__copy" && (node.inputs.size() != 1 || node.num_outputs != 1))
      throw node_error(g, nid, "__copy needs exactly one input and one output");
  }
  size_t entries = g.node_row_ptr[n];
  auto check_len = [&](size_t got, const char* key) {
    if (got != entries)
      throw Error(std::string("graph JSON: attrs.") + key + " has " + std::to_string(got) + " values for " +
                  std::to_string(entries) + " entries")
          .with("attribute", key);
  };
  check_len(g.dtype.size(), "dltype");
  check_len(g.shape.size(), "shape");
  check_len(g.storage_id.size(), "storage_id");
  if (!g.device_type.empty()) check_len(g.device_type.size(), "device_index");
  if (!g.storage_scope.empty()) check_len(g.storage_scope.size(), "storage_scope");
  for (size_t e = 0; e < entries; ++e) {
    if (g.dtype[e].bits == 0 || g.dtype[e].lanes == 0)
      throw Error("graph JSON: entry " + std::to_string(e) + " has dtype void").with("attribute", "dltype");
  }
  // Every tensor's byte size must be representable, so that planning and
  // allocation never multiply past 64 bits.
  for (uint32_t nid = 0; nid < n; ++nid) {
    for (uint32_t e = g.node_row_ptr[nid]; e < g.node_row_ptr[nid + 1]; ++e) {
      try {
        const std::vector<int64_t>& shape = g.shape[e];
        dtype_bytes(g.dtype[e], shape_numel(shape.data(), static_cast<int>(shape.size())));
      } catch (const Error& err) {
        throw node_error(g, nid, "output " + std::to_string(e - g.node_row_ptr[nid]) + ": " + err.message())
            .with("attribute", "shape");
      }
    }
  }
  for (uint32_t a : g.arg_nodes) {
    if (a >= n) throw Error("graph JSON: arg_nodes refers to node " + std::to_string(a) + " of " + std::to_string(n));
    if (g.nodes[a].op != "null") throw node_error(g, a, "listed in arg_nodes but is not an input (op null)");
  }
  for (size_t i = 0; i < g.heads.size(); ++i) {
    const NodeEntry& h = g.heads[i];
    if (h.node_id >= n || h.index >= g.node_row_ptr[h.node_id + 1] - g.node_row_ptr[h.node_id])
      throw Error("graph JSON: heads[" + std::to_string(i) + "] refers to a missing node output");
  }
}

}  // namespace

GraphDef parse_graph_json(const std::string& json_text) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers past double
    throw Error(std::string("graph JSON is not valid JSON: ") + e.what());
  }
  if (!root.is_object()) throw Error("graph JSON: top level is not an object");
  GraphDef g;
  try {
    for (const char* key : {"nodes", "arg_nodes", "heads", "node_row_ptr", "attrs"}) {
      if (!root.contains(key)) throw Error(std::string("graph JSON: missing '") + key + "'");
    }
    for (auto it = root.begin(); it != root.end(); ++it) {
      static const char* known[] = {"nodes", "arg_nodes", "heads", "node_row_ptr", "attrs", "metadata"};
      if (std::find(std::begin(known), std::end(known), it.key()) == std::end(known))
        throw Error("graph JSON: unknown top-level key '" + it.key() + "'");
    }
    const json& nodes = root.at("nodes");
    if (!nodes.is_array()) throw Error("graph JSON: nodes is not an array");
    for (size_t i = 0; i < nodes.size(); ++i) parse_node(g, i, nodes[i]);
    for (const json& a : root.at("arg_nodes")) g.arg_nodes.push_back(as_u32(a, "arg_nodes"));
    for (const json& h : root.at("heads")) g.heads.push_back(parse_entry(h, "heads"));
    for (const json& r : root.at("node_row_ptr")) g.node_row_ptr.push_back(as_u32(r, "node_row_ptr"));
    parse_attrs(g, root.at("attrs"));
  } catch (const json::exception& e) {
    throw Error(std::string("graph JSON has an unexpected type: ") + e.what());
  }
  validate(g);
  return g;
}

}  // namespace graphrt
