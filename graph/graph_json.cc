#include "graphrt/graph_json.h"

#include <algorithm>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/json_reader.h"

namespace graphrt {

namespace {

// A graph nests five deep (attrs, a list, a shape); its metadata may hold more. The text is
// already in memory when it gets here, so the byte bound only keeps sizes in range.
constexpr JsonLimits kGraphJsonLimits{size_t(1) << 32, 256};

Error node_error(const GraphDef& g, size_t nid, const std::string& message) {
  std::string name = nid < g.nodes.size() ? g.nodes[nid].name : "";
  return Error("graph node " + std::to_string(nid) + " " + quote_untrusted(name) + ": " + message)
      .with("node", std::to_string(nid) + " (" + name + ")");
}

Error type_error(const std::string& what) { return Error("graph JSON has an unexpected type: " + what); }

// `what` and `part` name the value; the message is built only on failure (a graph has
// thousands of these numbers).
uint32_t read_u32(JsonReader& c, const char* what, const char* part = "") {
  int64_t v = 0;
  if (!c.read_integer(&v) || v < 0 || v > 0xFFFFFFFFLL)
    throw Error(std::string("graph JSON: ") + what + part + " must be a non-negative integer, got " + c.raw_value());
  return static_cast<uint32_t>(v);
}

NodeEntry read_entry(JsonReader& c, const char* what) {
  size_t start = c.offset();
  if (!c.next_is_array())
    throw Error(std::string("graph JSON: ") + what + " must be [node_id, index(, version)], got " + c.raw_value());
  NodeEntry entry;
  size_t count = 0;
  c.array([&](size_t i) {
    if (i == 0) entry.node_id = read_u32(c, what, " node id");
    else if (i == 1) entry.index = read_u32(c, what, " index");
    else c.skip_value();
    count = i + 1;
  });
  if (count < 2 || count > 3) {
    c.rewind(start);
    throw Error(std::string("graph JSON: ") + what + " must be [node_id, index(, version)], got " + c.raw_value());
  }
  return entry;
}

std::string read_string_value(JsonReader& c, const std::string& what) {
  if (!c.next_is_string()) throw type_error(what + " must be a string, got " + c.raw_value());
  return c.read_string();
}

// A tvm_op node's attrs as written; checked once the node's op is known.
struct OpAttrs {
  bool present = false;
  bool is_object = false;
  bool has_func_name = false;
  bool func_name_is_string = false;
  std::string func_name;
  bool has[3] = {false, false, false};
  std::string count_text[3];  // num_inputs, num_outputs, flatten_data as written
};

const char* const kCountAttrs[3] = {"num_inputs", "num_outputs", "flatten_data"};

OpAttrs read_op_attrs(JsonReader& c) {
  OpAttrs a;
  a.present = true;
  if (!c.next_is_object()) {
    c.skip_value();
    return a;
  }
  a.is_object = true;
  c.object([&](std::string_view key) {
    if (key == "func_name") {
      a.has_func_name = true;
      a.func_name_is_string = c.next_is_string();
      a.func_name = a.func_name_is_string ? c.read_string() : c.raw_value();
      return;
    }
    for (int i = 0; i < 3; ++i) {
      if (key == kCountAttrs[i]) {
        a.has[i] = true;
        a.count_text[i] = c.next_is_string() ? c.read_string() : c.raw_value();
        return;
      }
    }
    c.skip_value();
  });
  return a;
}

uint32_t parse_count(const GraphDef& g, size_t nid, const std::string& text, const char* key) {
  try {
    size_t used = 0;
    long long n = std::stoll(text, &used);
    if (used != text.size() || n < 0 || n > 1000000) throw std::invalid_argument(text);
    return static_cast<uint32_t>(n);
  } catch (const std::exception&) {
    throw node_error(g, nid, std::string("attribute ") + key + " is not a count: " + text);
  }
}

void read_node(GraphDef& g, size_t nid, JsonReader& c) {
  if (!c.next_is_object()) throw node_error(g, nid, "node is not an object");
  g.nodes.emplace_back();
  bool has_op = false, has_name = false;
  OpAttrs attrs, attr;
  c.object([&](std::string_view key) {
    GraphNode& node = g.nodes.back();
    if (key == "op") {
      node.op = read_string_value(c, "node op");
      has_op = true;
    } else if (key == "name") {
      node.name = read_string_value(c, "node name");
      has_name = true;
    } else if (key == "inputs") {
      if (!c.next_is_array()) throw node_error(g, nid, "inputs is not an array");
      node.inputs.clear();
      c.array([&](size_t) { node.inputs.push_back(read_entry(c, "node input")); });
    } else if (key == "attrs") {
      attrs = read_op_attrs(c);
    } else if (key == "attr") {
      attr = read_op_attrs(c);
    } else if (key == "control_deps") {
      c.skip_value();
    } else {
      throw node_error(g, nid, "unknown node key " + quote_untrusted(std::string(key)));
    }
  });
  GraphNode& stored = g.nodes.back();
  if (!has_op || !has_name) throw node_error(g, nid, "node needs 'op' and 'name'");
  if (stored.op == "null") return;
  if (stored.op != "tvm_op") throw node_error(g, nid, "unknown op " + quote_untrusted(stored.op) + " (expected null or tvm_op)");
  const OpAttrs& a = attrs.present ? attrs : attr;
  if (!a.present || !a.is_object) throw node_error(g, nid, "tvm_op node has no attrs");
  if (!a.has_func_name) throw node_error(g, nid, "missing attribute 'func_name'");
  for (int i = 0; i < 3; ++i) {
    if (!a.has[i]) throw node_error(g, nid, std::string("missing attribute '") + kCountAttrs[i] + "'");
  }
  if (!a.func_name_is_string) throw node_error(g, nid, "func_name is not a string");
  stored.func_name = a.func_name;
  stored.num_inputs = parse_count(g, nid, a.count_text[0], kCountAttrs[0]);
  stored.num_outputs = parse_count(g, nid, a.count_text[1], kCountAttrs[1]);
  stored.flatten_data = parse_count(g, nid, a.count_text[2], kCountAttrs[2]) != 0;
}

// A value of an attrs list that is not of the list's type.
struct BadListValue {};

int64_t read_list_integer(JsonReader& c) {
  int64_t v = 0;
  if (!c.read_integer(&v)) throw BadListValue();
  return v;
}

// attrs.<key>: ["<tag>", [v0, v1, ...]], each value read by `convert`.
template <typename T, typename F>
std::vector<T> read_attr_list(JsonReader& c, const char* key, const char* tag, F convert) {
  auto shape_error = [&] {
    return Error(std::string("graph JSON: attrs.") + key + " must be [\"" + tag + "\", [...]]").with("attribute", key);
  };
  std::vector<T> out;
  if (!c.next_is_array()) throw shape_error();
  size_t parts = 0;
  c.array([&](size_t part) {
    parts = part + 1;
    if (part == 0) {
      if (!c.next_is_string() || c.read_string() != tag) throw shape_error();
      return;
    }
    if (part > 1 || !c.next_is_array()) throw shape_error();
    c.array([&](size_t i) {
      size_t start = c.offset();
      try {
        out.push_back(convert(c));
      } catch (Error& e) {
        throw e.with("attribute", std::string(key) + "[" + std::to_string(i) + "]");
      } catch (const BadListValue&) {
        c.rewind(start);
        throw Error(std::string("graph JSON: bad value in attrs.") + key + ": " + c.raw_value())
            .with("attribute", std::string(key) + "[" + std::to_string(i) + "]");
      }
    });
  });
  if (parts != 2) throw shape_error();
  return out;
}

void read_attrs(GraphDef& g, JsonReader& c) {
  if (!c.next_is_object()) throw Error("graph JSON: attrs is not an object");
  bool seen[3] = {false, false, false};
  c.object([&](std::string_view key) {
    if (key == "dltype") {
      seen[0] = true;
      // Most entries repeat the dtype before them: parsed once per run of equal names.
      std::string last_name;
      DLDataType last_dtype{};
      g.dtype = read_attr_list<DLDataType>(c, "dltype", "list_str", [&](JsonReader& v) {
        if (!v.next_is_string()) throw BadListValue();
        std::string name = v.read_string();
        if (last_name.empty() || name != last_name) {
          last_dtype = dtype_from_string(name);
          last_name = std::move(name);
        }
        return last_dtype;
      });
    } else if (key == "shape") {
      seen[1] = true;
      g.shape = read_attr_list<std::vector<int64_t>>(c, "shape", "list_shape", [](JsonReader& v) {
        size_t start = v.offset();
        if (!v.next_is_array()) throw BadListValue();
        std::vector<int64_t> s;
        v.array([&](size_t) { s.push_back(read_list_integer(v)); });
        for (int64_t d : s) {
          if (d < 0) {
            v.rewind(start);
            throw Error("negative dimension in shape " + v.raw_value());
          }
        }
        return s;
      });
    } else if (key == "storage_id") {
      seen[2] = true;
      g.storage_id = read_attr_list<int64_t>(c, "storage_id", "list_int", [](JsonReader& v) {
        int64_t sid = read_list_integer(v);
        if (sid < 0) throw Error("negative storage_id");
        return sid;
      });
    } else if (key == "device_index") {
      g.device_type = read_attr_list<int>(c, "device_index", "list_int", [](JsonReader& v) {
        int64_t t = read_list_integer(v);
        // DLDeviceType's values end at 15 (kDLCUDAManaged = 13 is the last DLPack names); a
        // larger number would be an invalid enum value wherever a DLDevice is made from it.
        if (t <= 0 || t > 15)
          throw Error("device_index " + std::to_string(t) + " is not a DLPack device type (1 to 15)");
        return static_cast<int>(t);
      });
    } else if (key == "storage_scope") {
      g.storage_scope = read_attr_list<std::string>(c, "storage_scope", "list_str", [](JsonReader& v) {
        if (!v.next_is_string()) throw BadListValue();
        return v.read_string();
      });
    } else {
      c.skip_value();
    }
  });
  const char* required[3] = {"dltype", "shape", "storage_id"};
  for (int i = 0; i < 3; ++i) {
    if (!seen[i])
      throw Error(std::string("graph JSON: attrs has no '") + required[i] + "'").with("attribute", required[i]);
  }
}

template <typename T, typename Read>
std::vector<T> read_list(JsonReader& c, const char* what, Read read) {
  if (!c.next_is_array()) throw Error(std::string("graph JSON: ") + what + " is not an array");
  std::vector<T> out;
  c.array([&](size_t) { out.push_back(read(c)); });
  return out;
}

size_t entry_nbytes(const GraphDef& g, uint32_t entry) {
  const std::vector<int64_t>& shape = g.shape[entry];
  return dtype_bytes(g.dtype[entry], shape_numel(shape.data(), static_cast<int>(shape.size())));
}

// Every input node (op null) is an input the caller sets or a param: one
// that arg_nodes leaves out would never be required, and the run would read
// whatever its memory held.
void validate_inputs_listed(const GraphDef& g) {
  std::vector<bool> listed(g.nodes.size(), false);
  for (uint32_t a : g.arg_nodes) listed[a] = true;
  for (size_t nid = 0; nid < g.nodes.size(); ++nid) {
    if (g.nodes[nid].op == "null" && !listed[nid])
      throw node_error(g, nid, "is an input (op null) but arg_nodes does not list it").with("attribute", "arg_nodes");
  }
}

// A `__nop` node runs nothing: its output is its input under another shape
// (TVM's in-place reshape). So both must be one tensor: the same storage, the
// same dtype and the same number of bytes; anything else would hand on
// memory that no kernel wrote.
void validate_alias(const GraphDef& g, uint32_t nid) {
  const GraphNode& node = g.nodes[nid];
  if (node.inputs.size() != 1 || g.node_row_ptr[nid + 1] - g.node_row_ptr[nid] != 1)
    throw node_error(g, nid, "__nop (an alias) needs exactly one input and one output").with("attribute", "inputs");
  const uint32_t in = g.entry_id(node.inputs[0]);
  const uint32_t out = g.entry_id(nid, 0);
  if (g.dtype[in] != g.dtype[out])
    throw node_error(g, nid, "__nop (an alias) has output dtype " + dtype_to_string(g.dtype[out]) +
                                 " but its input has " + dtype_to_string(g.dtype[in]))
        .with("attribute", "dltype");
  if (entry_nbytes(g, in) != entry_nbytes(g, out))
    throw node_error(g, nid, "__nop (an alias) has output shape " + shape_to_string(g.shape[out]) + " but its input has " +
                                 shape_to_string(g.shape[in]) + " (a different number of elements)")
        .with("attribute", "shape");
  if (g.storage_id[in] != g.storage_id[out])
    throw node_error(g, nid, "__nop (an alias) has output storage_id " + std::to_string(g.storage_id[out]) +
                                 " but its input has " + std::to_string(g.storage_id[in]))
        .with("attribute", "storage_id");
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
    try {
      check_tensor_dtype(g.dtype[e]);
    } catch (Error& e2) {
      throw Error(e2.kind(), "graph JSON: entry " + std::to_string(e) + ": " + e2.message()).with("attribute", "dltype");
    }
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
  validate_inputs_listed(g);
  for (uint32_t nid = 0; nid < n; ++nid) {
    if (g.nodes[nid].op == "tvm_op" && g.nodes[nid].func_name == "__nop") validate_alias(g, nid);
  }
  for (size_t i = 0; i < g.heads.size(); ++i) {
    const NodeEntry& h = g.heads[i];
    if (h.node_id >= n || h.index >= g.node_row_ptr[h.node_id + 1] - g.node_row_ptr[h.node_id])
      throw Error("graph JSON: heads[" + std::to_string(i) + "] refers to a missing node output");
  }
}

}  // namespace

GraphDef parse_graph_json(const std::string& json_text) {
  JsonReader c(json_text, kGraphJsonLimits, "graph JSON");
  if (c.peek() == 0) c.fail("empty text");
  if (!c.next_is_object()) {
    c.skip_value();  // malformed text is reported as such first
    c.expect_end();
    throw Error("graph JSON: top level is not an object");
  }
  GraphDef g;
  const char* const known[] = {"nodes", "arg_nodes", "heads", "node_row_ptr", "attrs", "metadata"};
  bool seen[5] = {false, false, false, false, false};
  c.object([&](std::string_view key) {
    size_t k = static_cast<size_t>(std::find(std::begin(known), std::end(known), key) - std::begin(known));
    if (k == 6) throw Error("graph JSON: unknown top-level key " + quote_untrusted(std::string(key)));
    if (k < 5) seen[k] = true;
    switch (k) {
      case 0:
        if (!c.next_is_array()) throw Error("graph JSON: nodes is not an array");
        g.nodes.clear();
        c.array([&](size_t i) { read_node(g, i, c); });
        break;
      case 1:
        g.arg_nodes = read_list<uint32_t>(c, "arg_nodes", [](JsonReader& v) { return read_u32(v, "arg_nodes"); });
        break;
      case 2:
        g.heads = read_list<NodeEntry>(c, "heads", [](JsonReader& v) { return read_entry(v, "heads"); });
        break;
      case 3:
        g.node_row_ptr =
            read_list<uint32_t>(c, "node_row_ptr", [](JsonReader& v) { return read_u32(v, "node_row_ptr"); });
        break;
      case 4:
        read_attrs(g, c);
        break;
      default:
        c.skip_value();
    }
  });
  c.expect_end();
  for (size_t k = 0; k < 5; ++k) {
    if (!seen[k]) throw Error(std::string("graph JSON: missing '") + known[k] + "'");
  }
  validate(g);
  return g;
}

}  // namespace graphrt
