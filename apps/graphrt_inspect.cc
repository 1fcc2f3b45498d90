// graphrt-inspect: module tree, graph summary, memory plans and DOT output of a TVM model.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/args.h"
#include "common/model.h"

using namespace graphrt_apps;
using graphrt::Error;
using nlohmann::json;

namespace {

const char* kUsage =
    "usage: graphrt-inspect MODEL.so [--graph G.json [--params P.params]] [--dot FILE.dot] [--loader dlopen|elf]\n"
    "                       [--all-functions] [--trust-exports]\n"
    "  --trust-exports  list a library without TVM markers (hand-written kernels): its exported\n"
    "                   functions are then taken as TVM packed functions\n";

void print_tree(const graphrt::Module& m, int depth, bool all_functions) {
  std::string pad(2 * depth, ' ');
  std::vector<std::string> names = m->function_names();
  std::cout << pad << "- " << m->type_key() << " (" << names.size() << " function" << (names.size() == 1 ? "" : "s")
            << ", " << m->imports().size() << " import" << (m->imports().size() == 1 ? "" : "s") << ")\n";
  size_t limit = all_functions ? names.size() : std::min<size_t>(names.size(), 12);
  for (size_t i = 0; i < limit; ++i) std::cout << pad << "    " << names[i] << "\n";
  if (limit < names.size()) std::cout << pad << "    ... " << names.size() - limit << " more (--all-functions)\n";
  for (const graphrt::Module& child : m->imports()) print_tree(child, depth + 1, all_functions);
}

std::string shape_text(const json& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i].get<int64_t>());
  if (shape.size() == 1) s += ",";
  return s + ")";
}

struct GraphView {
  json nodes, arg_nodes, heads, row_ptr, shapes, dtypes, storage;
  size_t entry(size_t nid, size_t index) const { return row_ptr[nid].get<size_t>() + index; }
  std::string entry_text(size_t e) const {
    std::string s = e < shapes.size() ? shape_text(shapes[e]) : "?";
    return s + " " + (e < dtypes.size() ? dtypes[e].get<std::string>() : std::string("?"));
  }
};

GraphView parse_graph(const std::string& text) {
  json g;
  try {
    g = json::parse(text);
  } catch (const std::exception& e) {
    throw Error(std::string("graph JSON does not parse: ") + e.what());
  }
  GraphView v;
  try {
    v.nodes = g.at("nodes");
    v.arg_nodes = g.at("arg_nodes");
    v.heads = g.at("heads");
    v.row_ptr = g.at("node_row_ptr");
    v.shapes = g.at("attrs").at("shape").at(1);
    v.dtypes = g.at("attrs").at("dltype").at(1);
    v.storage = g.at("attrs").at("storage_id").at(1);
  } catch (const std::exception& e) {
    throw Error(std::string("graph JSON lacks a required field: ") + e.what());
  }
  return v;
}

void write_dot(const GraphView& g, const std::set<std::string>& params, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw Error("cannot write DOT file").with("file", path);
  out << "digraph graphrt {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  for (size_t nid = 0; nid < g.nodes.size(); ++nid) {
    const json& n = g.nodes[nid];
    std::string name = n.value("name", "");
    std::string op = n.value("op", "");
    std::string label = name + "\\n" + g.entry_text(g.entry(nid, 0));
    if (op == "null") {
      out << "  n" << nid << " [shape=" << (params.count(name) ? "note" : "ellipse") << ", label=\"" << label
          << "\"];\n";
    } else {
      std::string fn = n.contains("attrs") ? n["attrs"].value("func_name", "") : "";
      if (fn != name) label = name + "\\n[" + fn + "]\\n" + g.entry_text(g.entry(nid, 0));
      out << "  n" << nid << " [shape=box, style=rounded, label=\"" << label << "\"];\n";
    }
    for (const json& in : n.value("inputs", json::array())) out << "  n" << in[0].get<size_t>() << " -> n" << nid << ";\n";
  }
  for (size_t i = 0; i < g.heads.size(); ++i) {
    out << "  out" << i << " [shape=doublecircle, label=\"output " << i << "\"];\n";
    out << "  n" << g.heads[i][0].get<size_t>() << " -> out" << i << ";\n";
  }
  out << "}\n";
  if (!out) throw Error("error writing DOT file").with("file", path);
}

int run(int argc, char** argv) {
  Args args({{"--graph", true}, {"--params", true}, {"--dot", true}, {"--loader", true}, {"--all-functions", false},
             {"--trust-exports", false}, {"--help", false}, {"-h", false}});
  args.parse(argc, argv);
  if (args.has("--help") || args.has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.positional().size() != 1) throw UsageError(args.positional().empty() ? "no MODEL given" : "expected one MODEL");
  const graphrt::LoadOptions options = load_options_from_args(args);
  const std::string path = args.positional()[0];
  Model model;
  std::string graph_path = args.get("--graph");
  if (graph_path.empty()) {
    // Not a factory: still print the module tree, then say what is missing.
    {
      std::ifstream probe(path, std::ios::binary);
      if (!probe) throw Error("cannot open model").with("file", path);
    }
    graphrt::Module root = graphrt::load_module(path, options);
    std::cout << "model: " << path << "\n\nmodule tree:\n";
    print_tree(root, 0, args.has("--all-functions"));
    if (root->type_key() != "GraphExecutorFactory" && root->type_key() != "GraphRuntimeFactory") {
      std::cout << "\ngraph: none in this library (root is '" << root->type_key()
                << "'); pass --graph G.json to inspect a three-file model\n";
      return 0;
    }
    model = load_model(path, options, "", "");
  } else {
    model = load_model(path, options, graph_path, args.get("--params"));
    std::cout << "model: " << path << " + " << graph_path << "\n\nmodule tree:\n";
    print_tree(model.root, 0, args.has("--all-functions"));
  }

  GraphView g = parse_graph(model.graph_json);
  std::set<std::string> params(model.param_names.begin(), model.param_names.end());
  size_t op_nodes = 0, nop_nodes = 0;
  std::map<std::string, int> by_function;
  for (const json& n : g.nodes) {
    if (n.value("op", "") == "null") continue;
    ++op_nodes;
    std::string fn = n.contains("attrs") ? n["attrs"].value("func_name", "?") : "?";
    if (fn == "__nop") ++nop_nodes;
    by_function[fn]++;
  }
  std::set<int64_t> sids;
  for (const json& s : g.storage) sids.insert(s.get<int64_t>());
  std::cout << "\ngraph: " << g.nodes.size() << " nodes (" << g.arg_nodes.size() << " inputs/params, " << op_nodes
            << " operators, " << nop_nodes << " __nop), " << g.shapes.size() << " entries, " << sids.size()
            << " storage ids\n";
  std::cout << "inputs:\n";
  size_t n_params = 0;
  for (const json& a : g.arg_nodes) {
    size_t nid = a.get<size_t>();
    std::string name = g.nodes[nid].value("name", "");
    if (params.count(name)) {
      ++n_params;
      continue;
    }
    std::cout << "  " << name << ": " << g.entry_text(g.entry(nid, 0)) << "\n";
  }
  std::cout << "params: " << n_params << "\n";
  std::cout << "outputs:\n";
  for (size_t i = 0; i < g.heads.size(); ++i) {
    size_t nid = g.heads[i][0].get<size_t>(), idx = g.heads[i][1].get<size_t>();
    std::cout << "  " << i << ": " << g.nodes[nid].value("name", "") << ":" << idx << " "
              << g.entry_text(g.entry(nid, idx)) << "\n";
  }
  std::cout << "operators by function (" << by_function.size() << " functions):\n";
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& kv : by_function) sorted.emplace_back(-kv.second, kv.first);
  std::sort(sorted.begin(), sorted.end());
  size_t shown = 0;
  for (const auto& kv : sorted) {
    if (++shown > 40 && !args.has("--all-functions")) {
      std::cout << "  ... " << sorted.size() - 40 << " more (--all-functions)\n";
      break;
    }
    std::cout << "  " << -kv.first << " x " << kv.second << "\n";
  }

  std::cout << "\nmemory plan:\n";
  try {
    auto ex = make_executor(model, DLDevice{kDLCPU, 0}, "", false);
    graphrt::MemoryReport m = ex->memory_report();
    std::cout << "  tvm plan (storage_id pools): " << m.tvm_plan_bytes << " bytes\n"
              << "  liveness re-plan (one arena): " << m.liveness_plan_bytes << " bytes\n"
              << "  allocated by this executor:   " << m.allocated_bytes << " bytes (active plan: "
              << (m.active == graphrt::MemoryPlan::kLiveness ? "liveness" : "tvm") << ")\n";
  } catch (const std::exception& e) {
    std::cout << "  unavailable on cpu(0): " << one_line(e.what()) << "\n";
  }

  if (args.has("--dot")) {
    write_dot(g, params, args.get("--dot"));
    std::cout << "\nwrote DOT graph to " << args.get("--dot") << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-inspect", run, argc, argv); }
