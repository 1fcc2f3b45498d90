// The VM through libgraphrt's public API alone (graphrt/registry.h,
// module.h, packed_func.h): the graphrt.vm.* global functions that the VM
// tools use: assemble -> verify -> disassemble, link -> call, the function
// queries, tracing, budget, interrupt, and their error paths.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"
#include "graphrt/packed_func.h"
#include "graphrt/registry.h"
#include "vm_packed_values.h"

namespace {

using graphrt::Error;
using graphrt::RetValue;
using namespace vm_test;

const char* kProgram = R"(module demo version 1
import tensor.numel "0r_I"
global i32 calls
func __init "0v" export
  const.i32 %i0, 100
  global.store.i32 @calls, %i0
  ret
end
func add "0ii_i" export
  add.i32 %i2, %i0, %i1
  ret %i2
end
func count "0_i" export
  global.load.i32 %i0, @calls
  const.i32 %i1, 1
  add.i32 %i0, %i0, %i1
  global.store.i32 @calls, %i0
  ret %i0
end
func size_and_half "0rf_IF" export
  call @tensor.numel(%r0) -> (%I0)
  ext.f32.f64 %F0, %f0
  ret %I0, %F0
end
func spin "0_i" export
loop:
  br loop
end
)";

RetValue call(const std::string& function, const std::vector<RetValue>& args) {
  return call_packed(graphrt_apps::global_function(function), args);
}

class VmPublicApi : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/graphrt_vm_api_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& f : files_) unlink(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string write(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    files_.push_back(path);
    return path;
  }
  // kProgram assembled, written as demo.vmbc and linked.
  graphrt::Module link_demo() {
    const std::string vmbc = write("demo.vmbc", call("graphrt.vm.assemble", {string_arg(kProgram)}).as_string());
    return call("graphrt.vm.link", {string_arg(vmbc)}).as_module();
  }

  std::string dir_;
  std::vector<std::string> files_;
};

TEST_F(VmPublicApi, AssembleVerifyDisassembleRoundTrip) {
  const std::string image = call("graphrt.vm.assemble", {string_arg(kProgram)}).as_string();
  ASSERT_GT(image.size(), 8u);
  EXPECT_EQ(image.substr(0, 4), "GRVM");
  EXPECT_NO_THROW(call("graphrt.vm.verify", {bytes_arg(image)}));
  const std::string listing = call("graphrt.vm.disassemble", {bytes_arg(image)}).as_string();
  EXPECT_NE(listing.find("module demo version 1"), std::string::npos) << listing;
  EXPECT_NE(listing.find("add.i32 %i2, %i0, %i1"), std::string::npos) << listing;
  // The text assembles back to the same image.
  EXPECT_EQ(call("graphrt.vm.assemble", {string_arg(listing)}).as_string(), image);
}

TEST_F(VmPublicApi, AssembleErrorsNameTheLine) {
  try {
    call("graphrt.vm.assemble", {string_arg("module bad version 1\nfunc f \"0_i\" export\n  frobnicate %i0\nend\n")});
    FAIL() << "bad text assembled";
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("line"), "3") << e.what();
    EXPECT_NE(std::string(e.what()).find("frobnicate"), std::string::npos) << e.what();
  }
  // Text that assembles but that a load would refuse (an f32 register returned as i32).
  EXPECT_THROW(call("graphrt.vm.assemble", {string_arg("module bad\nfunc f \"0_i\"\n  ret %f0\nend\n")}), Error);
}

TEST_F(VmPublicApi, VerifyAndDisassembleRefuseBrokenImages) {
  const std::string image = call("graphrt.vm.assemble", {string_arg(kProgram)}).as_string();
  for (const std::string& broken : {image.substr(0, image.size() - 3), std::string("GRVX") + image.substr(4),
                                    std::string()}) {
    EXPECT_THROW(call("graphrt.vm.verify", {bytes_arg(broken)}), Error);
    EXPECT_THROW(call("graphrt.vm.disassemble", {bytes_arg(broken)}), Error);
  }
}

TEST_F(VmPublicApi, LinkedModuleCallsAndQueries) {
  const graphrt::Module m = link_demo();
  EXPECT_EQ(m->type_key(), "graphrt_vm_context");
  EXPECT_EQ(call("graphrt.vm.module_name", {module_arg(m)}).as_string(), "demo");
  EXPECT_EQ(m->function_names(), (std::vector<std::string>{"add", "count", "size_and_half", "spin"}));
  EXPECT_EQ(call("graphrt.vm.signature", {module_arg(m), string_arg("add")}).as_string(), "0ii_i");
  EXPECT_EQ(call("graphrt.vm.argument_types", {module_arg(m), string_arg("demo.size_and_half")}).as_string(), "rf");
  EXPECT_EQ(call("graphrt.vm.result_types", {module_arg(m), string_arg("size_and_half")}).as_string(), "IF");
  // A built-in module's function by full name.
  EXPECT_EQ(call("graphrt.vm.signature", {module_arg(m), string_arg("tensor.numel")}).as_string(), "0r_I");

  graphrt::ArgList two;
  two.add_int(5).add_int(37);
  EXPECT_EQ(graphrt::call_function(m->require_function("add"), two).as_int(), 42);
  EXPECT_EQ(graphrt::call_function(m->require_function("demo.add"), two).as_int(), 42);
  // __init ran once when the module was linked; the context keeps the global.
  EXPECT_EQ(graphrt::call_function(m->require_function("count"), graphrt::ArgList()).as_int(), 101);
  EXPECT_EQ(graphrt::call_function(m->require_function("count"), graphrt::ArgList()).as_int(), 102);

  // Several results come back as one graphrt.vm.Results list.
  graphrt::NDArray t = graphrt::NDArray::empty({2, 3}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  graphrt::ArgList tensor_and_half;
  tensor_and_half.add_ndarray(t).add_float(0.5);
  const RetValue results = graphrt::call_function(m->require_function("size_and_half"), tensor_and_half);
  ASSERT_EQ(results.code(), kTVMObjectHandle);
  EXPECT_EQ(call("graphrt.vm.list_types", {results}).as_string(), "IF");
  RetValue index;
  index.set_int(0);
  EXPECT_EQ(call("graphrt.vm.list_get", {results, index}).as_int(), 6);
  index.set_int(1);
  EXPECT_EQ(call("graphrt.vm.list_get", {results, index}).as_float(), 0.5);
}

TEST_F(VmPublicApi, QueryErrorsNameTheFunction) {
  const graphrt::Module m = link_demo();
  EXPECT_EQ(m->get_function("nope"), nullptr);
  try {
    call("graphrt.vm.signature", {module_arg(m), string_arg("nope")});
    FAIL() << "a missing function has a signature";
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("function"), "demo.nope") << e.what();
  }
  try {
    call("graphrt.vm.argument_types", {module_arg(m), string_arg("tensor.alloc")});
    FAIL() << "a variadic function has argument types";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("variadic"), std::string::npos) << e.what();
  }
  // Not a VM module.
  RetValue none;
  EXPECT_THROW(call("graphrt.vm.module_name", {none}), Error);
}

TEST_F(VmPublicApi, LinkErrorsNameTheFile) {
  const std::string missing = dir_ + "/missing.vmbc";
  try {
    call("graphrt.vm.link", {string_arg(missing)});
    FAIL() << "a missing file linked";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  // A verifier failure in a .vmasm names the file and the function.
  const std::string bad = write("bad.vmasm", "module bad\nfunc f \"0_i\"\n  ret %i0\n  ret %i0\nend\n");
  try {
    call("graphrt.vm.link", {string_arg(bad)});
    FAIL() << "unverifiable bytecode linked";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("function"), "f") << e.what();
  }
  EXPECT_THROW(call("graphrt.vm.link", {}), Error);
}

// The error `call(function, args)` throws; "(no error)" if it returns.
std::string error_of(const std::string& function, std::vector<RetValue> args) {
  try {
    call(function, std::move(args));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(VmPublicApi, MalformedModuleSpecsAreRefused) {
  const std::string lib = VM_SAMPLE_MODULE_PATH;
  // No path at all.
  EXPECT_TRUE(contains(error_of("graphrt.vm.link", {string_arg("")}), "without a path")) << error_of("graphrt.vm.link", {string_arg("")});
  EXPECT_TRUE(contains(error_of("graphrt.vm.link", {string_arg("@sample_create?scale=2")}), "without a path"));
  // Broken %-escapes name the parameter and the address.
  for (const char* params : {"scale=%zz", "scale=%4", "%=2", "scale=2&offset=1%"}) {
    const std::string spec = lib + "@sample_create?" + params;
    const std::string what = error_of("graphrt.vm.link", {string_arg(spec)});
    EXPECT_TRUE(contains(what, "malformed %-escape") && contains(what, spec)) << params << ": " << what;
  }
  // '@' with an empty create function means the default one, as no '@' does.
  ASSERT_EQ(error_of("graphrt.vm.link", {string_arg(lib + "@")}), "(no error)");
  const graphrt::Module linked = call("graphrt.vm.link", {string_arg(lib + "@?scale=2")}).as_module();
  graphrt::ArgList two;
  two.add_int(1).add_int(2);
  EXPECT_EQ(graphrt::call_function(linked->require_function("sample.scaled_add"), two).as_int(), 6);
  // A create function the library lacks, and one that refuses.
  EXPECT_TRUE(contains(error_of("graphrt.vm.link", {string_arg(lib + "@no_such_create")}), "no_such_create"));
  EXPECT_TRUE(contains(error_of("graphrt.vm.link", {string_arg(lib + "@sample_create_refuse")}), "VM module creation failed"));
  // Missing files, a .so that is not a shared library, one that is no VM module.
  const std::string missing = dir_ + "/missing.so";
  EXPECT_TRUE(contains(error_of("graphrt.vm.link", {string_arg(missing + "@sample_create")}), missing));
  const std::string fake = write("fake.so", "not an ELF file");
  EXPECT_TRUE(contains(error_of("graphrt.vm.link", {string_arg(fake)}), fake)) << error_of("graphrt.vm.link", {string_arg(fake)});
  const std::string not_vm = GRAPHRT_LIBRARY_PATH;
  const std::string not_vm_error = error_of("graphrt.vm.link", {string_arg(not_vm)});
  EXPECT_TRUE(contains(not_vm_error, "lacks its creation function") && contains(not_vm_error, not_vm)) << not_vm_error;
  // Neither bytecode nor a library.
  const std::string notes = write("notes.txt", "module x\n");
  EXPECT_TRUE(contains(error_of("graphrt.vm.link", {string_arg(notes)}), "not a VM module file"));
  // A bad spec among good ones: nothing is linked.
  const std::string good = write("good.vmbc", call("graphrt.vm.assemble", {string_arg(kProgram)}).as_string());
  EXPECT_TRUE(contains(error_of("graphrt.vm.link", {string_arg(good), string_arg(lib + "@sample_create?x=%g0")}), "%-escape"));
}

TEST_F(VmPublicApi, LoadRefusesCraftedFiles) {
  const std::string image = call("graphrt.vm.assemble", {string_arg(kProgram)}).as_string();
  // Truncated, corrupted and empty images, and one with trailing bytes.
  std::string flipped = image;
  flipped[image.size() / 2] = static_cast<char>(~flipped[image.size() / 2]);
  const std::vector<std::string> crafted = {image.substr(0, image.size() / 2), std::string("GRVX") + image.substr(4),
                                            std::string(), image + "x", flipped};
  for (size_t k = 0; k < crafted.size(); ++k) {
    const std::string path = write("crafted" + std::to_string(k) + ".vmbc", crafted[k]);
    const std::string what = error_of("graphrt.vm.load", {string_arg(path)});
    if (k == crafted.size() - 1 && what == "(no error)") continue;  // a flipped byte may still verify
    EXPECT_TRUE(contains(what, path)) << k << ": " << what;
  }
  // Assembly text with a syntax error names the file and the line.
  const std::string bad = write("bad.vmasm", "module bad\nfunc f \"0_i\"\n  const.i32 %i0, 1e3\n  ret %i0\nend\n");
  try {
    call("graphrt.vm.load", {string_arg(bad)});
    FAIL() << "bad text loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("file"), bad) << e.what();
    EXPECT_EQ(e.context_value("line"), "3") << e.what();
  }
  // A bad module to link first.
  const std::string good = write("good.vmbc", image);
  EXPECT_TRUE(contains(error_of("graphrt.vm.load", {string_arg(good), string_arg("")}), "without a path"));
  EXPECT_TRUE(contains(error_of("graphrt.vm.load", {string_arg(good), string_arg(dir_ + "/none.vmasm")}), "none.vmasm"));
}

TEST_F(VmPublicApi, TracerSeesEveryInstructionUntilRemoved) {
  const graphrt::Module m = link_demo();
  std::vector<std::string> lines;
  RetValue tracer;
  tracer.set_function(graphrt::make_function(
      [&lines](const graphrt::TVMArgs& args, RetValue*) { lines.push_back(args.as_string(0)); }));
  call("graphrt.vm.set_tracer", {module_arg(m), tracer});
  graphrt::ArgList two;
  two.add_int(1).add_int(2);
  EXPECT_EQ(graphrt::call_function(m->require_function("add"), two).as_int(), 3);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "demo.add@1: add.i32 %i2, %i0, %i1"), lines.end())
      << lines.front();
  const size_t traced = lines.size();
  call("graphrt.vm.set_tracer", {module_arg(m), RetValue()});
  graphrt::call_function(m->require_function("add"), two);
  EXPECT_EQ(lines.size(), traced);
}

TEST_F(VmPublicApi, BudgetTextsAndInterrupt) {
  // Texts are read by the runtime's one budget parser; errors name where the text came from.
  try {
    call("graphrt.vm.set_instruction_budget", {string_arg("lots"), string_arg("--budget")});
    FAIL() << "a budget of 'lots' was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("--budget"), "lots") << e.what();
  }
  EXPECT_THROW(call("graphrt.vm.set_instruction_budget", {string_arg("0")}), Error);
  call("graphrt.vm.set_instruction_budget", {string_arg("5000")});
  const graphrt::Module limited = link_demo();
  try {
    graphrt::call_function(limited->require_function("spin"), graphrt::ArgList());
    FAIL() << "spin returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(5000 branches"), std::string::npos) << e.what();
  }
  RetValue unlimited;
  unlimited.set_int(int64_t{1} << 60);
  call("graphrt.vm.set_instruction_budget", {unlimited});
  const graphrt::Module m = link_demo();
  std::atomic<bool> done{false};
  std::thread stopper([&] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      call("graphrt.vm.interrupt", {module_arg(m)});
    }
  });
  try {
    graphrt::call_function(m->require_function("spin"), graphrt::ArgList());
    ADD_FAILURE() << "spin returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("VM invocation interrupted"), std::string::npos) << e.what();
  }
  done = true;
  stopper.join();
  RetValue standard;
  standard.set_int(100000000);
  call("graphrt.vm.set_instruction_budget", {standard});
}

}  // namespace
