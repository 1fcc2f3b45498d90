// TVM models loaded by the embedded ELF loader (no dlopen) give outputs
// identical to the dlopen path; untrusted imports are refused by name.
#include "module/library_support.h"
#include "src/elf/elf_cxx_imports.h"
#include "src/elf/elf_imports.h"
#include "backends/elf_so/elf_library.h"
#include "fixture_cases.h"
#include "nm_symbols.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

std::vector<NDArray> run_case(const std::string& name, const std::string& loader, bool one_file) {
  LoadOptions options;
  options.loader = loader;
  std::shared_ptr<GraphExecutor> ex;
  if (one_file) {
    Module root = load_module(fixture_path(name + "/deploy_factory.so"), options);
    ex = graph_executor_of(call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module());
  } else {
    Module lib = load_module(fixture_path(name + "/deploy_lib.so"), options);
    ex = create_graph_executor(read_text(fixture_path(name + "/deploy_graph.json")), lib,
                               read_text(fixture_path(name + "/deploy_params.params")), {cpu()});
  }
  set_case_inputs(*ex, name);
  ex->run();
  std::vector<NDArray> outputs;
  for (int i = 0; i < ex->num_outputs(); ++i) outputs.push_back(ex->get_output(i).copy_to_device(cpu()));
  return outputs;
}

std::vector<std::string> elf_cases() { return cpu_cases(); }

}  // namespace

class ElfModels : public ::testing::TestWithParam<std::string> {};

TEST_P(ElfModels, OutputsEqualDlopenPath) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = GetParam();
  for (bool one_file : {true, false}) {
    std::vector<NDArray> elf = run_case(name, "elf", one_file);
    std::vector<NDArray> dl = run_case(name, "dlopen", one_file);
    ASSERT_EQ(elf.size(), dl.size());
    for (size_t i = 0; i < elf.size(); ++i) {
      ASSERT_EQ(elf[i].nbytes(), dl[i].nbytes());
      EXPECT_EQ(0, std::memcmp(elf[i]->data, dl[i]->data, dl[i].nbytes())) << name << " output " << i;
      EXPECT_EQ("", compare_output(elf[i], fixture_path(name + "/output_" + std::to_string(i) + ".npy"), 0));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, ElfModels, ::testing::ValuesIn(elf_cases()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

TEST(ElfModels, TwoCopiesRunSideBySide) {
  GRAPHRT_REQUIRE_FIXTURES();
  LoadOptions options;
  options.loader = "elf";
  Module a = load_module(fixture_path("mlp/deploy_factory.so"), options);
  Module b = load_module(fixture_path("mlp/deploy_factory.so"), options);
  auto ea = graph_executor_of(call_function(a->get_function("default"), ArgList().add_device(cpu())).as_module());
  auto eb = graph_executor_of(call_function(b->get_function("default"), ArgList().add_device(cpu())).as_module());
  EXPECT_NE(a->imports()[0]->get_function("tvmgen_default_fused_nn_softmax")->backend_c_func(),
            b->imports()[0]->get_function("tvmgen_default_fused_nn_softmax")->backend_c_func());
  set_case_inputs(*ea, "mlp");
  set_case_inputs(*eb, "mlp");
  a = Module();  // dropping one copy leaves the other working
  ea.reset();
  eb->run();
  EXPECT_EQ("", compare_output(eb->get_output(0), fixture_path("mlp/output_0.npy"), 0));
}

// C++ code may import the allocation operators and the rest of the C++ list,
// but nothing outside it: std::cout and system() stay unresolved.
TEST(ElfModels, LibraryOutsideTheAllowListIsRefusedBySymbol) {
  LoadOptions options;
  options.loader = "elf";
  try {
    load_module(GRAPHRT_OFF_LIST_IMPORT_SO, options);
    FAIL() << "the library imports symbols outside the allow-list";
  } catch (const Error& e) {
    const std::string symbol = e.context_value("symbol");
    EXPECT_FALSE(symbol.empty()) << e.what();
    EXPECT_EQ(graphrt::elf::cxx_allowlist_symbol(symbol), nullptr) << e.what();
    EXPECT_EQ(graphrt::elf::libc_allowlist_symbol(symbol), nullptr) << e.what();
    EXPECT_NE(std::string(e.what()).find(GRAPHRT_OFF_LIST_IMPORT_SO), std::string::npos) << e.what();
  }
}

TEST(ElfModels, LoadsFromMemory) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::vector<uint8_t> bytes = read_file(fixture_path("multi_io/deploy_factory.so"));
  LoadOptions options;
  options.loader = "elf";
  Module root = load_module_from_memory(bytes.data(), bytes.size(), options);
  bytes.assign(bytes.size(), 0);  // the image is independent of the buffer once loaded
  auto ex = graph_executor_of(call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module());
  set_case_inputs(*ex, "multi_io");
  ex->run();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ("", compare_output(ex->get_output(i), fixture_path("multi_io/output_" + std::to_string(i) + ".npy"), 0));
}

// Every import of the fixtures the ELF loader takes (all but C++ BYOC) is in
// its import table, read independently with nm: the next gap fails here.
TEST(ElfImportTable, CoversEveryFixtureImport) {
  GRAPHRT_REQUIRE_FIXTURES();
  const graphrt::elf::ImportResolver resolve = graphrt::elf::tvm_import_resolver(&graphrt::runtime_symbol);
  std::vector<std::string> cases = elf_cases();
  cases.push_back("mlp_cuda");
  int checked = 0;
  for (const std::string& c : cases) {
    for (const char* file : {"deploy_factory.so", "deploy_lib.so"}) {
      bool ok = false;
      for (const NmSymbol& s : nm_dynamic(fixture_path(c + "/" + file), "--undefined-only", &ok)) {
        if (s.type != 'U') continue;
        ++checked;
        EXPECT_NE(resolve(s.name), nullptr) << c << "/" << file << " imports " << s.name;
      }
      if (!ok) {
        GTEST_SKIP() << "nm not available";
      }
    }
  }
  EXPECT_GT(checked, 0);
  // And the whole runtime ABI, the float16 helpers included, reaches ELF images.
  for (const std::string& name : runtime_symbol_names()) EXPECT_NE(resolve(name), nullptr) << name;
  for (const char* name : {"__gnu_h2f_ieee", "__truncdfhf2", "__extendhfsf2", "__truncsfbf2",
                           "TVMBackendAnyListResetItem"})
    EXPECT_EQ(resolve(name), runtime_symbol(name)) << name;
}
