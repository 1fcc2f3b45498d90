// graphrt-inspect: module tree, graph summary, memory plans and DOT output of a TVM model.
#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "common/args.h"
#include "common/model.h"
#include "common/relax_function.h"
#include "common/output_file.h"
#include "graphrt/graph_json.h"
#include "graphrt/relax_vm.h"
#include "graphrt/ndarray.h"

using namespace graphrt_apps;
using graphrt::Error;

namespace {

const AppHelp kHelp = {
    "graphrt-inspect", "MODEL [options]",
    "Describes a TVM export without running it: the module tree and its functions, the graph (inputs,\n"
    "outputs, params, nodes) and its memory plans, or a Relax executable's functions, constants and code.",
    "  graphrt-inspect deploy.so\n"
    "  graphrt-inspect deploy_lib.so --graph deploy_graph.json --params deploy_params.params --dot graph.dot\n"
    "  graphrt-inspect deploy_relax.so\n"};

const std::vector<FlagSpec> kFlags = {
    {"--graph", true, false, "G.json",
     "graph JSON of a three-file export; MODEL is then its kernels library (default: none, MODEL holds the graph)"},
    {"--params", true, false, "P.params", "params file of a three-file export (needs --graph; default: none)"},
    {"--dot", true, false, "FILE.dot", "writes the graph as Graphviz DOT (default: none)"},
    {"--loader", true, false, "dlopen|elf", "how MODEL is loaded: dlopen, or graphrt's own ELF loader (default: dlopen)"},
    {"--all-functions", false, false, "", "lists every function of each module (default: off, the first 12)"},
    {"--trust-exports", false, false, "",
     "lists a library without TVM markers (hand-written kernels), taking its exported functions as TVM packed "
     "functions (default: off, such a library is refused)"},
};

// A module imported by several others (the import tree is a DAG) is listed
// in full once; a walk per path would be exponential in a crafted file.
void print_tree(const graphrt::Module& m, int depth, bool all_functions,
                std::vector<const graphrt::ModuleNode*>* listed) {
  std::string pad(2 * depth, ' ');
  if (std::find(listed->begin(), listed->end(), m.get()) != listed->end()) {
    std::cout << pad << "- " << graphrt::shown_name(m->type_key()) << " (listed above)\n";
    return;
  }
  listed->push_back(m.get());
  std::vector<std::string> names = m->function_names();
  // Names come from the file: shown_name quotes one that could drive the terminal.
  std::cout << pad << "- " << graphrt::shown_name(m->type_key()) << " (" << names.size() << " function" << (names.size() == 1 ? "" : "s")
            << ", " << m->imports().size() << " import" << (m->imports().size() == 1 ? "" : "s") << ")\n";
  size_t limit = all_functions ? names.size() : std::min<size_t>(names.size(), 12);
  for (size_t i = 0; i < limit; ++i) std::cout << pad << "    " << graphrt::shown_name(names[i]) << "\n";
  if (limit < names.size()) std::cout << pad << "    ... " << names.size() - limit << " more (--all-functions)\n";
  for (const graphrt::Module& child : m->imports()) print_tree(child, depth + 1, all_functions, listed);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string entry_text(const graphrt::GraphDef& g, uint32_t node, uint32_t index) {
  uint32_t e = g.entry_id(node, index);
  return shape_text(g.shape[e]) + " " + graphrt::dtype_to_string(g.dtype[e]);
}

void write_dot(const graphrt::GraphDef& g, const std::set<std::string>& params, const std::string& path) {
  std::ostringstream out;
  out << "digraph graphrt {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    const graphrt::GraphNode& n = g.nodes[nid];
    std::string label = n.name + "\\n" + entry_text(g, nid, 0);
    if (n.op == "null") {
      out << "  n" << nid << " [shape=" << (params.count(n.name) ? "note" : "ellipse") << ", label=\"" << label
          << "\"];\n";
    } else {
      if (n.func_name != n.name) label = n.name + "\\n[" + n.func_name + "]\\n" + entry_text(g, nid, 0);
      out << "  n" << nid << " [shape=box, style=rounded, label=\"" << label << "\"];\n";
    }
    for (const graphrt::NodeEntry& in : n.inputs) out << "  n" << in.node_id << " -> n" << nid << ";\n";
  }
  for (size_t i = 0; i < g.heads.size(); ++i) {
    out << "  out" << i << " [shape=doublecircle, label=\"output " << i << "\"];\n";
    out << "  n" << g.heads[i].node_id << " -> out" << i << ";\n";
  }
  out << "}\n";
  write_output_file(path, out.str(), "DOT file");
}

int run(int argc, char** argv) {
  Args args(kHelp, kFlags);
  if (!args.parse(argc, argv)) return 0;
  if (args.positional().size() != 1) throw UsageError(args.positional().empty() ? "no MODEL given" : "expected one MODEL");
  const graphrt::LoadOptions options = load_options_from_args(args);
  const std::string path = args.positional()[0];
  ModelFile model;
  std::string graph_path = args.get("--graph");
  if (graph_path.empty()) {
    // Not a factory: still print the module tree, then say what is missing.
    graphrt::Module root = graphrt::load_module(path, options);
    std::cout << "model: " << path << "\n\nmodule tree:\n";
    std::vector<const graphrt::ModuleNode*> listed;
    print_tree(root, 0, args.has("--all-functions"), &listed);
    const std::optional<graphrt::ModelKind> kind = graphrt::model_kind_of(root);
    if (kind == graphrt::ModelKind::kRelax) {
      // The functions with what their code checks of each parameter, then the executable's
      // own listing: constants (dtype and shape), functions, and the code.
      std::cout << "\nRelax functions (parameters as the code checks them; n<k>: a symbolic dimension):\n";
      for (const std::string& line : relax_function_signatures(root)) std::cout << "  " << line << "\n";
      const graphrt::RelaxVM vm(root);
      std::cout << "\n" << vm.executable_stats() << "\n" << vm.executable_text();
      return 0;
    }
    if (kind != graphrt::ModelKind::kGraph) {
      std::cout << "\ngraph: none in this library (root is " << graphrt::quote_untrusted(root->type_key())
                << "); pass --graph G.json to inspect a three-file model\n";
      return 0;
    }
    model = load_model(path, options, "", "");
  } else {
    model = load_model(path, options, graph_path, args.get("--params"));
    std::cout << "model: " << path << " + " << graph_path << "\n\nmodule tree:\n";
    std::vector<const graphrt::ModuleNode*> listed;
    print_tree(model.root, 0, args.has("--all-functions"), &listed);
  }

  graphrt::GraphDef g = graphrt::parse_graph_json(model.graph_json);
  // The executor (through the session layer) says which inputs are bound params.
  std::unique_ptr<graphrt::Runner> runner;
  std::string ex_error;
  try {
    runner = make_runner(model, DLDevice{kDLCPU, 0}, "", false);
  } catch (const std::exception& e) {
    ex_error = e.what();
  }
  std::set<std::string> params(model.param_names.begin(), model.param_names.end());
  size_t op_nodes = 0, nop_nodes = 0;
  std::map<std::string, int> by_function;
  for (const graphrt::GraphNode& n : g.nodes) {
    if (n.op == "null") continue;
    ++op_nodes;
    if (n.func_name == "__nop") ++nop_nodes;
    by_function[n.func_name.empty() ? "?" : n.func_name]++;
  }
  std::set<int64_t> sids(g.storage_id.begin(), g.storage_id.end());
  std::cout << "\ngraph: " << g.nodes.size() << " nodes (" << g.arg_nodes.size() << " inputs/params, " << op_nodes
            << " operators, " << nop_nodes << " __nop), " << g.num_entries() << " entries, " << sids.size()
            << " storage ids\n";
  std::cout << "inputs:\n";
  size_t n_params = 0;
  for (uint32_t nid : g.arg_nodes) {
    const std::string& name = g.nodes[nid].name;
    if (params.count(name)) {
      ++n_params;
      continue;
    }
    std::cout << "  " << name << ": " << entry_text(g, nid, 0) << "\n";
  }
  std::cout << "params: " << n_params << "\n";
  std::cout << "outputs:\n";
  for (size_t i = 0; i < g.heads.size(); ++i) {
    const graphrt::NodeEntry& h = g.heads[i];
    std::cout << "  " << i << ": " << g.nodes[h.node_id].name << ":" << h.index << " " << entry_text(g, h.node_id, h.index)
              << "\n";
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
  if (runner) {
    graphrt::MemoryReport m = runner->memory_report().value();
    std::cout << "  tvm plan (storage_id pools): " << m.tvm_plan_bytes << " bytes\n"
              << "  liveness re-plan (one arena): " << m.liveness_plan_bytes << " bytes"
              << (m.liveness_concatenations_in_place > 0
                      ? " (" + std::to_string(m.liveness_concatenations_in_place) + " concatenations done in place)"
                      : std::string())
              << "\n"
              << "  allocated by this executor:   " << m.allocated_bytes << " bytes (active plan: "
              << (m.active == graphrt::MemoryPlan::kLiveness ? "liveness" : "tvm") << ")\n";
  } else {
    std::cout << "  unavailable on cpu(0): " << one_line(ex_error) << "\n";
  }

  if (args.has("--dot")) {
    write_dot(g, params, args.get("--dot"));
    std::cout << "\nwrote DOT graph to " << args.get("--dot") << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-inspect", run, argc, argv); }
