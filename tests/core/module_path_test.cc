// Paths as a user writes them: "deploy.so" is the file in the current directory (as in TVM),
// never a search of the system library paths.
#include <unistd.h>

#include <climits>

#include "graphrt/runtime.h"
#include "test_support.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

// Runs the test body in `dir` and returns to where it was.
class InDirectory {
 public:
  explicit InDirectory(const std::string& dir) {
    char buf[PATH_MAX];
    if (getcwd(buf, sizeof(buf))) previous_ = buf;
    ok_ = chdir(dir.c_str()) == 0;
  }
  ~InDirectory() {
    if (!previous_.empty() && chdir(previous_.c_str()) != 0) std::abort();
  }
  bool ok() const { return ok_; }

 private:
  std::string previous_;
  bool ok_ = false;
};

}  // namespace

TEST(ModulePath, BareRelativePathIsTheFileInTheCurrentDirectory) {
  GRAPHRT_REQUIRE_FIXTURES();
  InDirectory in(fixture_path("mlp"));
  ASSERT_TRUE(in.ok());
  Module lib = load_module("deploy_factory.so");
  EXPECT_EQ(lib->type_key(), "GraphExecutorFactory");
  LoadOptions elf;
  elf.loader = "elf";
  EXPECT_EQ(load_module("deploy_lib.so", elf)->type_key(), "library");
}

TEST(ModulePath, BareNameOfASystemLibraryIsNotSearchedFor) {
  // libm.so.6 exists in the system library paths but not in the current directory.
  char tmpl[] = "/tmp/graphrt_module_path_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  {
    InDirectory in(tmpl);
    ASSERT_TRUE(in.ok());
    try {
      load_module("libm.so.6");
      FAIL() << "libm.so.6 was found outside the current directory";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos) << e.what();
    }
  }
  rmdir(tmpl);
}
