// graphrt-pack: builds a TVM-format model library without TVM.
//
// Compiles kernels written against TVM's packed C ABI
//   int fn(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* resource)
// with the system compiler and links them, together with a generated C file that defines
// `__tvm_dev_mblob` (u64 size + u64 count + records + `_import_tree`, TVM's layout), into a .so
// that TVM's runtime (and graphrt) can load:
//   --graph/--params   -> a GraphExecutorFactory record (root) importing `_lib`
//   --blob-entry T=F   -> a raw record with tkey T and payload F, imported by `_lib`
#include <sys/stat.h>
#include <sys/wait.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/args.h"
#include "common/model.h"
#include "common/output_file.h"
#include "graphrt/binary_loader.h"
#include "graphrt/graph_executor.h"
#include "graphrt/graph_json.h"
#include "graphrt/library.h"

extern char** environ;

using namespace graphrt_apps;
using graphrt::Error;

namespace {

const AppHelp kHelp = {
    "graphrt-pack", "-o OUT.so [options] SOURCES/OBJECTS...",
    "Builds a library in TVM's export format from C/C++ kernels (.c, .cc, .cpp) or objects (.o, .a),\n"
    "without TVM: kernels only, or with --graph (and --params) a one-file model graphrt-run runs.\n"
    "\n"
    "Each kernel is an exported function with TVM's packed C signature, declared by\n"
    "#include <graphrt/tvm_abi.h> (graphrt-pack passes its -I):\n"
    "  int NAME(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code,\n"
    "           void* resource_handle);\n"
    "A graph node's tensors (its inputs, then its outputs) arrive in args[i].v_handle as DLTensor*\n"
    "(type code kTVMDLTensorHandle, or kTVMNDArrayHandle from Python and TVM's C++ API: both point at a\n"
    "DLTensor); return 0, or -1 after TVMAPISetLastError(msg).\n"
    "With --graph, every function the graph calls (func_name) must be defined by SOURCES.\n"
    "(README.md, 'Writing kernels for graphrt-pack', has a complete kernel.)",
    "  graphrt-pack -o model.so kernels.c --graph graph.json --params model.params\n"
    "  graphrt-run model.so --random-inputs 0\n"
    "  graphrt-pack -o add_one.so add_one.c     # kernels only: the lib of a three-file model\n"};

const std::vector<FlagSpec> kFlags = {
    {"-o", true, false, "OUT.so", "the library to write (required; also --output)"},
    {"--output", true, false, "OUT.so", "the same as -o"},
    {"--graph", true, false, "G.json", "graph JSON to embed: the result is a one-file model (default: kernels only)"},
    {"--params", true, false, "P.params", "params to embed with --graph (default: none)"},
    {"--module-name", true, false, "NAME", "the factory's module name, as relay.build's mod_name (default: default)"},
    {"--blob-entry", true, true, "TKEY=FILE", "adds a blob record of type TKEY holding FILE's bytes (default: none)"},
    {"--cc", true, false, "CC", "C compiler (default: $CC, else cc)"},
    {"--cxx", true, false, "CXX", "C++ compiler and linker (default: $CXX, else c++)"},
    {"--cflags", true, false, "FLAGS", "more compiler flags, split at spaces (default: none; -O2 -fPIC are always given)"},
    {"--ldflags", true, false, "FLAGS", "more linker flags, split at spaces (default: none)"},
    {"-I", true, true, "DIR", "more include directories (default: graphrt's headers only)"},
    {"--emit-c", true, false, "FILE.c", "keeps the generated C file holding the blob (default: a temporary file)"},
    {"--emit-blob", true, false, "FILE.bin", "writes the raw __tvm_dev_mblob bytes (default: none)"},
    {"--verbose", false, false, "", "prints each compiler and linker command (default: off)"},
};

#ifndef GRAPHRT_PACK_INCLUDE_DIRS
#define GRAPHRT_PACK_INCLUDE_DIRS ""
#endif
#ifndef GRAPHRT_PACK_DLPACK_DIR
#define GRAPHRT_PACK_DLPACK_DIR ""
#endif

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_cxx(const std::string& f) {
  return ends_with(f, ".cc") || ends_with(f, ".cpp") || ends_with(f, ".cxx") || ends_with(f, ".C");
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  std::string w;
  while (is >> w) out.push_back(w);
  return out;
}

void run_command(const std::vector<std::string>& cmd, bool verbose) {
  if (verbose) {
    for (const auto& c : cmd) std::cerr << c << " ";
    std::cerr << "\n";
  }
  std::vector<char*> argv;
  for (const auto& c : cmd) argv.push_back(const_cast<char*>(c.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  if (rc != 0) throw Error("cannot run compiler '" + cmd[0] + "': " + std::strerror(rc));
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) throw Error("waiting for the compiler failed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line;
    for (const auto& c : cmd) line += c + " ";
    throw Error("compiler failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): " + line);
  }
}

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Where graphrt/tvm_abi.h is for the kernels: an installed graphrt-pack (PREFIX/bin) uses
// PREFIX/include, so the installed headers are used even when the source tree is gone;
// the build tree's graphrt-pack uses the source tree's.
std::vector<std::string> kernel_include_dirs() {
  std::vector<std::string> dirs;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string bin(exe, static_cast<size_t>(n));
    std::string prefix_include = bin.substr(0, bin.rfind('/')) + "/../include";
    if (file_exists(prefix_include + "/graphrt/tvm_abi.h")) {
      dirs.push_back(prefix_include);
      if (*GRAPHRT_PACK_DLPACK_DIR) dirs.push_back(GRAPHRT_PACK_DLPACK_DIR);
    }
  }
  if (dirs.empty()) dirs = split_words(std::string(GRAPHRT_PACK_INCLUDE_DIRS));
  std::vector<std::string> usable;
  for (const std::string& d : dirs)
    if (d != "/usr/include" && d != "/usr/local/include") usable.push_back(d);  // system dirs: never -I
  return usable;
}

std::string blob_c_source(const std::string& blob) {
  std::ostringstream os;
  os << "/* Generated by graphrt-pack: the packed module blob (TVM spec 1.4). */\n"
        "#ifdef __cplusplus\n#define GRAPHRT_PACK_EXTERN extern \"C\"\n#else\n#define GRAPHRT_PACK_EXTERN\n#endif\n"
        "GRAPHRT_PACK_EXTERN __attribute__((visibility(\"default\"))) const unsigned char __tvm_dev_mblob["
     << blob.size() << "] = {\n";
  for (size_t i = 0; i < blob.size(); ++i) {
    os << static_cast<unsigned>(static_cast<unsigned char>(blob[i])) << ",";
    if (i % 24 == 23) os << "\n";
  }
  os << "};\n"
        "/* The loader stores the library module here (kernels may define it themselves). */\n"
        "GRAPHRT_PACK_EXTERN __attribute__((weak, visibility(\"default\"))) void* __tvm_module_ctx = 0;\n";
  return os.str();
}

// A graph calling a function the sources do not define would fail only when run; refuse it now
// (and remove the half-useful output).
void check_graph_functions_defined(const std::string& graph_path, const std::string& out) {
  graphrt::GraphDef graph = graphrt::parse_graph_json(read_file(graph_path, "graph JSON"));
  // Symbols only: the blob may hold records this process has no loader for.
  std::shared_ptr<graphrt::Library> lib = graphrt::load_library("dlopen", graphrt::LibrarySource{out, nullptr, 0});
  std::vector<std::string> missing;
  for (const graphrt::GraphNode& node : graph.nodes) {
    const std::string& fn = node.func_name;
    if (node.op != "tvm_op" || fn.empty() || fn == "__nop" || fn == "__copy" || lib->symbol(fn)) continue;
    if (std::find(missing.begin(), missing.end(), fn) == missing.end()) missing.push_back(fn);
  }
  if (missing.empty()) return;
  std::string names, defined;
  for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
  // Names are read from the file on request: before it is removed.
  for (const std::string& f : lib->symbol_names())
    if (f.compare(0, 2, "__") != 0) defined += (defined.empty() ? "" : ", ") + f;
  std::remove(out.c_str());
  throw Error("the graph calls " + names + ", which the sources do not define (they define: " +
              (defined.empty() ? std::string("nothing") : defined) + "); no output written")
      .with("file", graph_path);
}

int run(int argc, char** argv) {
  Args args(kHelp, kFlags);
  if (!args.parse(argc, argv)) return 0;
  std::string out = args.has("-o") ? args.get("-o") : args.get("--output");
  if (out.empty()) throw UsageError("no output given (-o OUT.so)");
  if (args.has("--params") && !args.has("--graph")) throw UsageError("--params needs --graph");
  if (args.has("--module-name") && !args.has("--graph")) throw UsageError("--module-name needs --graph");
  bool verbose = args.has("--verbose");
  for (const std::string& src : args.positional()) {
    struct stat st;
    if (stat(src.c_str(), &st) != 0) throw Error("cannot find source/object file").with("file", src);
  }
  if (args.positional().empty() && !args.has("--graph") && args.all("--blob-entry").empty())
    throw UsageError("nothing to pack: give kernel sources/objects, --graph or --blob-entry");

  // ---- the blob ----
  std::vector<std::pair<std::string, std::string>> extras;
  for (const std::string& spec : args.all("--blob-entry")) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--blob-entry expects TKEY=FILE, got '" + spec + "'");
    std::string tkey = spec.substr(0, eq);
    if (tkey == "_lib" || tkey == "_import_tree")
      throw UsageError("--blob-entry: '" + tkey + "' is reserved");
    extras.emplace_back(tkey, read_file(spec.substr(eq + 1), "blob entry payload"));
  }
  bool factory = args.has("--graph");
  std::string blob;
  if (factory || !extras.empty()) {
    // Records: [factory ->] _lib -> every extra entry.
    std::vector<graphrt::ModuleBlobRecord> records;
    std::vector<std::vector<uint64_t>> imports;
    if (factory) {
      const std::string& graph_path = args.get("--graph");
      std::string graph = read_file(graph_path, "graph JSON");
      try {
        graphrt::parse_graph_json(graph);
      } catch (graphrt::Error& e) {
        throw e.with("file", graph_path);
      }
      graphrt::ParamList params;
      if (args.has("--params"))
        params = graphrt::load_param_dict(read_file(args.get("--params"), "params file"), args.get("--params"));
      graphrt::BlobWriter record;
      graphrt::write_graph_executor_factory(record, graph, params, args.get("--module-name", "default"));
      records.push_back({"GraphExecutorFactory", record.take()});
      imports.push_back({1});
    }
    uint64_t lib = records.size();
    records.push_back({"_lib", ""});
    imports.emplace_back();
    for (const auto& e : extras) {
      imports[lib].push_back(records.size());
      records.push_back({e.first, e.second});
    }
    blob = graphrt::write_module_blob(records, imports);
  }
  if (args.has("--emit-blob")) {
    write_output_file(args.get("--emit-blob"), blob, "blob");
  }

  // ---- compile and link ----
  char tmpl[] = "/tmp/graphrt-pack-XXXXXX";
  if (!mkdtemp(tmpl)) throw Error("cannot create a temporary directory");
  std::string tmp = tmpl;
  std::vector<std::string> cleanup;
  auto remove_all = [&] {
    for (const auto& f : cleanup) std::remove(f.c_str());
    rmdir(tmp.c_str());
  };
  try {
    std::string c_path = args.has("--emit-c") ? args.get("--emit-c") : tmp + "/graphrt_blob.c";
    {
      std::ofstream f(c_path);
      f << (blob.empty() ? std::string("/* graphrt-pack: no blob (library without imports) */\n"
                                       "__attribute__((weak, visibility(\"default\"))) void* __tvm_module_ctx = 0;\n")
                         : blob_c_source(blob));
      if (!f) throw Error("cannot write generated C file").with("file", c_path);
    }
    if (!args.has("--emit-c")) cleanup.push_back(c_path);
    const char* env_cc = std::getenv("CC");
    const char* env_cxx = std::getenv("CXX");
    std::string cc = args.get("--cc", env_cc && *env_cc ? env_cc : "cc");
    std::string cxx = args.get("--cxx", env_cxx && *env_cxx ? env_cxx : "c++");
    std::vector<std::string> flags{"-fPIC", "-O2"};
    for (const std::string& d : kernel_include_dirs()) flags.push_back("-I" + d);
    for (const std::string& d : args.all("-I")) flags.push_back("-I" + d);
    for (const std::string& w : split_words(args.get("--cflags"))) flags.push_back(w);
    std::vector<std::string> objects;
    bool any_cxx = false;
    std::vector<std::string> sources{c_path};
    for (const auto& s : args.positional()) sources.push_back(s);
    int index = 0;
    for (const std::string& src : sources) {
      bool c_like = ends_with(src, ".c");
      bool cxx_like = is_cxx(src);
      if (!c_like && !cxx_like) {
        objects.push_back(src);  // .o, .a, ...: linked as given
        continue;
      }
      any_cxx |= cxx_like;
      std::string obj = tmp + "/obj" + std::to_string(index++) + ".o";
      std::vector<std::string> cmd{cxx_like ? cxx : cc, "-c"};
      cmd.insert(cmd.end(), flags.begin(), flags.end());
      if (cxx_like) cmd.push_back("-std=c++17");
      cmd.insert(cmd.end(), {"-o", obj, src});
      cleanup.push_back(obj);
      run_command(cmd, verbose);
      objects.push_back(obj);
    }
    std::vector<std::string> link{any_cxx ? cxx : cc, "-shared", "-fPIC", "-o", out};
    link.insert(link.end(), objects.begin(), objects.end());
    for (const std::string& w : split_words(args.get("--ldflags"))) link.push_back(w);
    run_command(link, verbose);
  } catch (...) {
    remove_all();
    throw;
  }
  remove_all();
  if (factory) check_graph_functions_defined(args.get("--graph"), out);
  std::cout << "graphrt-pack: wrote " << out << " (" << (factory ? "GraphExecutorFactory + " : "") << "_lib"
            << (extras.empty() ? "" : " + " + std::to_string(extras.size()) + " blob entr" +
                                          (extras.size() == 1 ? "y" : "ies"))
            << ", blob " << blob.size() << " bytes)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-pack", run, argc, argv); }
