// A data file names only functions its own kernels library defines: dlsym on a dlopen handle
// also searches the library's dependencies, so a graph JSON naming `exit` or `abort` reached
// libc's (the process ended with the pointer argument as its status). Every loader resolves a
// name to the library's own image or to nothing, and the graph executor's refusal names the
// node and the symbol.
#include <dlfcn.h>

#include "fixture_cases.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

const char* const kForeign[] = {"exit", "abort", "system", "malloc", "dlopen"};

TEST(KernelNames, LibrariesResolveOnlyTheirOwnSymbols) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const char* loader : {"dlopen", "elf"}) {
    std::shared_ptr<Library> lib = load_library(loader, LibrarySource{fixture_path("mlp/deploy_lib.so"), nullptr, 0});
    EXPECT_NE(lib->symbol("tvmgen_default_fused_nn_softmax"), nullptr) << loader;
    for (const char* name : kForeign) {
      // The process has them (the test links libc and libdl), the library does not define them.
      ASSERT_NE(dlsym(RTLD_DEFAULT, name), nullptr) << name;
      EXPECT_EQ(lib->symbol(name), nullptr) << loader << " resolved '" << name << "' outside the library";
    }
  }
}

TEST(KernelNames, GraphNamingLibcIsRefusedNamingNodeAndSymbol) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const char* loader : {"dlopen", "elf"}) {
    LoadOptions options;
    options.loader = loader;
    Module lib = load_module(fixture_path("mlp/deploy_lib.so"), options);
    for (const char* name : {"exit", "abort"}) {
      std::string graph = read_text(fixture_path("mlp/deploy_graph.json"));
      const std::string attr = "\"func_name\": \"tvmgen_default_fused_nn_softmax\"";
      const size_t at = graph.find(attr);
      ASSERT_NE(at, std::string::npos);
      graph.replace(at, attr.size(), std::string("\"func_name\": \"") + name + "\"");
      std::string msg;
      try {
        GraphExecutor::create(graph, lib, {cpu()});
        ADD_FAILURE() << loader << ": a graph calling '" << name << "' was accepted";
      } catch (const Error& e) {
        msg = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound) << msg;
        EXPECT_EQ(e.context_value("symbol"), name) << msg;
        EXPECT_EQ(e.context_value("node"), "tvmgen_default_fused_nn_softmax") << msg;
      }
      EXPECT_NE(msg.find(std::string("calls function '") + name + "', which the library does not have"),
                std::string::npos)
          << msg;
    }
  }
}

}  // namespace
