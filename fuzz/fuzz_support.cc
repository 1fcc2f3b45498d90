#include "fuzz_support.h"

#include <set>

#include "graph/graph_executor_factory.h"
#include "graphrt/graph_json.h"
#include "graphrt/graph_executor.h"
#include "graphrt/packed_func.h"
#include "graphrt/runtime.h"

namespace graphrt_fuzz {

namespace {

extern "C" int stub_kernel(TVMValue*, int*, int, TVMValue* ret, int* ret_code, void*) {
  if (ret) ret->v_handle = nullptr;
  if (ret_code) *ret_code = kTVMNullptr;
  return 0;
}

bool is_runtime_data_symbol(const std::string& name) {
  static const std::set<std::string> names = {
      "__tvm_dev_mblob",           "__tvm_module_ctx",        "__tvm_main__",
      "__TVMFuncCall",             "__TVMAPISetLastError",    "__TVMBackendGetFuncFromEnv",
      "__TVMBackendAllocWorkspace", "__TVMBackendFreeWorkspace", "__TVMBackendParallelLaunch",
      "__TVMBackendParallelBarrier",
      // TVM v0.22+ (tvm-ffi), and v0.21's transitional names (refused by name when present)
      "__tvm_ffi__library_bin",    "__tvm_ffi__library_ctx",  "__tvm_ffi_library_bin",
      "__tvm_ffi_library_ctx",     "__TVMFFIFunctionCall",    "__TVMFFIEnvModLookupFromImports",
      "__TVMFFIHandleInitOnce"};
  return names.count(name) != 0;
}

class InertLibrary : public graphrt::Library {
 public:
  // The real library's memory and sizes bound what is read; it holds no code
  // to split, imports nothing and every name is callable (the stub).
  explicit InertLibrary(std::shared_ptr<graphrt::Library> real) : real_(std::move(real)) {
    if (!real_) return;
    facts_.mapping = real_->facts().mapping;
    facts_.ranges = real_->facts().ranges;
    for (graphrt::LibraryRange& r : facts_.ranges) r.code = false;
    for (const auto& [name, symbol] : real_->facts().symbols)
      facts_.symbols.emplace(name, graphrt::LibrarySymbol{symbol.size, true});
  }
  void* symbol(const std::string& name) const override {
    if (is_runtime_data_symbol(name)) return real_ ? real_->symbol(name) : nullptr;
    return reinterpret_cast<void*>(&stub_kernel);
  }
  std::string origin() const override { return real_ ? real_->origin() : "<fuzz>"; }

 private:
  std::shared_ptr<graphrt::Library> real_;
};

}  // namespace

std::shared_ptr<graphrt::Library> inert_library(std::shared_ptr<graphrt::Library> real) {
  return std::make_shared<InertLibrary>(std::move(real));
}

graphrt::LoadOptions stub_load_options() {
  graphrt::LoadOptions options;
  options.trust_exports = true;
  return options;
}

bool graph_fits(const std::string& graph_json, size_t limit) {
  graphrt::GraphDef graph;
  try {
    graph = graphrt::parse_graph_json(graph_json);
  } catch (const graphrt::Error&) {
    return true;
  }
  size_t total = 0;
  for (size_t i = 0; i < graph.shape.size() && i < graph.dtype.size(); ++i) {
    size_t bytes = (graph.dtype[i].bits * size_t(graph.dtype[i].lanes) + 7) / 8;
    for (int64_t d : graph.shape[i]) {
      if (d < 0) return true;  // refused by the executor
      if (d != 0 && bytes > limit / size_t(d)) return false;
      bytes *= size_t(d);
    }
    if (bytes > limit - total) return false;
    total += bytes;
  }
  return true;
}

void create_executors(const graphrt::Module& root) {
  const graphrt::FactoryContents* contents = graphrt::factory_contents(root);
  if (!contents || !graph_fits(contents->graph_json, kMaxGraphBytes)) return;
  graphrt::PackedFunc create = root->get_function("create_with_options");
  for (const char* plan : {"tvm", "liveness"}) {
    try {
      graphrt::Module m =
          graphrt::call_function(create, graphrt::ArgList().add_string(plan).add_int(0).add_device(graphrt::cpu()))
              .as_module();
      auto executor = graphrt::graph_executor_of(m);
      if (executor) executor->memory_report();
    } catch (const graphrt::Error&) {
    }
  }
}

}  // namespace graphrt_fuzz
