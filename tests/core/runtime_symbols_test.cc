// What generated code may import from the runtime, against what graphrt
// provides: the fixtures' undefined symbols (real TVM exports) and the C ABI
// TVM's own runtime exports to generated code. A new gap fails here, not as a
// model that dies at its first kernel call.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "fixture_cases.h"
#include "graphrt/library.h"
#include "module/library_support.h"
#include "nm_symbols.h"

namespace {

// Where a dlopen'd library's import `name` resolves in this process, "" if nowhere.
std::string provider(const std::string& name) {
  void* p = dlsym(RTLD_DEFAULT, name.c_str());
  Dl_info info;
  if (!p || !dladdr(p, &info) || !info.dli_fname) return "";
  return info.dli_fname;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

// libgraphrt's dynamic exports, read from the built library itself (this
// white-box test program links the layers, not libgraphrt).
bool from_graphrt(const std::string& name) {
  static const std::set<std::string> exports = [] {
    bool ok = false;
    std::set<std::string> names;
    for (const auto& s : graphrt_test::nm_dynamic(GRAPHRT_LIBRARY, "--defined-only", &ok)) names.insert(s.name);
    return names;
  }();
  return exports.count(name) != 0;
}

// TVM's runtime exports that generated code (not users) calls: the backend
// family, the error and call entry points, and the compiler helpers.
bool generated_code_abi(const std::string& name) {
  return name.rfind("TVMBackend", 0) == 0 || name == "TVMAPISetLastError" || name == "TVMGetLastError" ||
         name == "TVMFuncCall" || name.rfind("__", 0) == 0;
}

TEST(RuntimeSymbols, EveryFixtureImportIsDefined) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::vector<std::string> cases = graphrt_test::all_tvm_cases();
  cases.push_back("mlp_tar");
  cases.push_back("chain1000_tar");
  int checked = 0;
  for (const std::string& c : cases) {
    for (const char* file : {"deploy_factory.so", "deploy_lib.so"}) {
      const std::string path = graphrt_test::fixture_path(c + "/" + file);
      if (!exists(path)) continue;
      bool ok = false;
      const auto imports = graphrt_test::nm_dynamic(path, "--undefined-only", &ok);
      if (!ok) {
        GTEST_SKIP() << "nm not available";
      }
      for (const auto& s : imports) {
        if (s.type != 'U') continue;  // weak imports may stay unresolved
        ++checked;
        if (!s.version.empty()) {
          // Versioned: the C and C++ runtime libraries' (GLIBC_*, GLIBCXX_*, ...).
          EXPECT_FALSE(provider(s.name).empty()) << c << "/" << file << " imports " << s.name << "@" << s.version;
          continue;
        }
        // Unversioned: only a runtime (TVM's, so graphrt) defines these.
        EXPECT_TRUE(from_graphrt(s.name)) << c << "/" << file << " imports " << s.name
                                          << ", which libgraphrt does not export (found in: " << provider(s.name)
                                          << ")";
        if (s.name.rfind("_Z", 0) != 0) {  // C names also reach in-memory (ELF) images
          EXPECT_NE(graphrt::runtime_symbol(s.name), nullptr) << s.name;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(RuntimeSymbols, EverythingTvmsRuntimeGivesGeneratedCode) {
  const std::string peer = graphrt_test::fixtures_dir().empty()
                               ? std::string()
                               : graphrt_test::fixtures_dir() + "/../peer/tvm-0.18-runtime/lib/libtvm_runtime.so";
  if (peer.empty() || !exists(peer)) {
    GTEST_SKIP() << "TVM's runtime not found beside the fixtures";
  }
  bool ok = false;
  const auto exports = graphrt_test::nm_dynamic(peer, "--defined-only", &ok);
  if (!ok) {
    GTEST_SKIP() << "nm not available";
  }
  const std::vector<std::string> ours = graphrt::runtime_symbol_names();
  const std::set<std::string> table(ours.begin(), ours.end());
  int checked = 0;
  for (const auto& s : exports) {
    if ((s.type != 'T' && s.type != 'W') || !generated_code_abi(s.name)) continue;
    ++checked;
    EXPECT_TRUE(from_graphrt(s.name)) << s.name << " (exported by TVM's runtime) is not exported by libgraphrt";
    EXPECT_TRUE(table.count(s.name)) << s.name << " is missing from graphrt::runtime_symbol (ELF images)";
  }
  EXPECT_GE(checked, 14);  // 11 TVMBackend*, the error/call entry points, the half helpers
}

}  // namespace
