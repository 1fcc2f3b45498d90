// graphrt's typed C++ API for Relax executables (graphrt/relax_vm.h), linking
// libgraphrt only, as users do: every shared case and input set bit-exact with
// both loaders, functions and parameters listed, tuple results as trees.
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/relax_function.h"
#include "graphrt/registry.h"
#include "graphrt/relax_vm.h"
#include "test_support.h"

namespace {

// The case's folder: relax/<name> (TVM v0.20), relax-ffi/<folder> for "ffi_<folder>" (TVM v0.26).
std::string case_folder(const std::string& name) {
  if (name.rfind("ffi_", 0) == 0) return "relax-ffi/" + name.substr(4);
  return "relax/" + name;
}

// The CPU cases run by one call (not the language model's steps, not the CUDA cases).
void add_cases(const std::string& folder, const std::string& prefix, std::vector<std::string>* out) {
  const std::string root = graphrt_test::fixtures_dir() + "/" + folder;
  DIR* d = graphrt_test::fixtures_dir().empty() ? nullptr : opendir(root.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, "relax_", 6) != 0) continue;
    std::ifstream f(root + "/" + e->d_name + "/case.json");
    const nlohmann::json info = nlohmann::json::parse(f);
    if (info.value("kind", "relax_vm") == "relax_vm" && info.value("device", "cpu") == "cpu")
      out->push_back(prefix + e->d_name);
  }
  closedir(d);
}

std::vector<std::string> case_names() {
  std::vector<std::string> out;
  add_cases("relax", "", &out);
  add_cases("relax-ffi", "ffi_", &out);
  std::sort(out.begin(), out.end());
  return out;
}

graphrt::NDArray load_npy(const std::string& path) {
  graphrt_test::Npy a = graphrt_test::read_npy(path);
  graphrt::NDArray out = graphrt::NDArray::empty(a.shape, a.dtype, graphrt::cpu());
  out.copy_from_bytes(a.data.data(), a.data.size());
  return out;
}

void expect_equal(const graphrt::NDArray& got, const std::string& path) {
  graphrt_test::Npy want = graphrt_test::read_npy(path);
  ASSERT_EQ(got.shape(), want.shape) << path;
  ASSERT_TRUE(graphrt::operator==(got.dtype(), want.dtype)) << path;
  std::vector<char> bytes(want.data.size());
  got.copy_to_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(bytes == want.data) << path << " differs";
}

class RelaxCppApi : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    GRAPHRT_REQUIRE_FIXTURES();
    if (case_names().empty()) GTEST_SKIP() << "Relax fixtures not found";
    dir_ = graphrt_test::fixtures_dir() + "/" + case_folder(GetParam());
    std::ifstream f(dir_ + "/case.json");
    info_ = nlohmann::json::parse(f);
  }
  std::string dir_;
  nlohmann::json info_;
};

TEST_P(RelaxCppApi, EveryInputSetBitExactWithBothLoaders) {
  const std::string entry = info_.value("entry", "main");
  std::vector<std::string> suffixes = {""};
  if (info_.contains("input_sets")) {
    suffixes.clear();
    for (const auto& s : info_["input_sets"]) suffixes.push_back(s.value("suffix", ""));
  }
  for (const char* loader : {"dlopen", "elf"}) {
    graphrt::LoadOptions options;
    options.loader = loader;
    graphrt::RelaxVM vm = graphrt::RelaxVM::load(dir_ + "/deploy_relax.so", options);
    const std::vector<std::string> functions = vm.functions();
    EXPECT_NE(std::find(functions.begin(), functions.end(), entry), functions.end());
    const std::vector<std::string> params = vm.param_names(entry);
    std::vector<std::string> order;  // input_order, else the inputs (a case with one input)
    if (info_.contains("input_order")) {
      order = info_["input_order"].get<std::vector<std::string>>();
    } else {
      for (const auto& kv : info_["inputs"].items()) order.push_back(kv.key());
    }
    ASSERT_EQ(params, order);
    for (const std::string& suffix : suffixes) {
      SCOPED_TRACE(std::string(loader) + " input set '" + suffix + "'");
      std::vector<graphrt::NDArray> args;
      for (const std::string& p : params) args.push_back(load_npy(dir_ + "/input_" + p + suffix + ".npy"));
      const graphrt::RelaxValue result = vm.call(entry, args);
      EXPECT_EQ(result.is_tuple(), info_.value("structure", std::string("tensor")) != "tensor");
      const std::vector<graphrt::NDArray> outputs = result.flatten();
      ASSERT_EQ(outputs.size(), info_["outputs"].size());
      for (size_t i = 0; i < outputs.size(); ++i)
        expect_equal(outputs[i], dir_ + "/output_" + std::to_string(i) + suffix + ".npy");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RelaxCppApi, ::testing::ValuesIn([] {
                           std::vector<std::string> c = case_names();
                           return c.empty() ? std::vector<std::string>{"none"} : c;
                         }()));

TEST(RelaxCppApiDetails, NestedTupleSignaturesProfileAndErrors) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string dir = graphrt_test::fixtures_dir() + "/relax/relax_tuple_io";
  if (case_names().empty()) GTEST_SKIP() << "Relax fixtures not found";
  graphrt::RelaxVM vm = graphrt::RelaxVM::load(dir + "/deploy_relax.so");
  EXPECT_EQ(vm.param_signature("main", 0), "float32[2, 3]");
  const graphrt::RelaxParamSpec y = vm.param_spec("main", 1);  // case.json: y int32 (2, 3)
  EXPECT_TRUE(y.known());
  EXPECT_EQ(graphrt::dtype_to_string(y.dtype), "int32");
  EXPECT_EQ(y.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(y.symbols, (std::vector<int64_t>{-1, -1}));
  EXPECT_THROW(vm.param_spec("main", 2), graphrt::Error);  // main takes two
  const std::vector<graphrt::NDArray> args = {load_npy(dir + "/input_x.npy"), load_npy(dir + "/input_y.npy")};
  const graphrt::RelaxValue r = vm.call("main", args);
  ASSERT_TRUE(r.is_tuple());
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].kind, graphrt::RelaxValue::Kind::kTensor);
  ASSERT_TRUE(r.items[1].is_tuple());
  EXPECT_EQ(r.items[1].items.size(), 2u);
  EXPECT_NE(vm.profile("main", args).find("Total (one call)"), std::string::npos);
  EXPECT_EQ(vm.trace("main", args).rfind("{\"displayTimeUnit\"", 0), 0u);
  try {
    vm.call("main", {args[0]});
    FAIL() << "a missing argument must fail";
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("main"), std::string::npos) << e.what();
  }
  try {
    graphrt::RelaxVM not_relax(graphrt::system_lib());
    FAIL() << "a library that is not a Relax executable must be refused";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kTypeMismatch);
    EXPECT_NE(std::string(e.what()).find("is not a Relax executable"), std::string::npos) << e.what();
  }
}

// set_instrument from C++ (TVM's VirtualMachine.set_instrument): every call
// seen before and after, relax_mlp's kernels in the model's order (its nm -D
// list: Linear -> relu -> Linear -> softmax), a skipped kernel run by the
// instrument itself still giving TVM's output.
TEST(RelaxCppApiDetails, InstrumentSeesEveryCallAndCanSkipOne) {
  GRAPHRT_REQUIRE_FIXTURES();
  if (case_names().empty()) GTEST_SKIP() << "Relax fixtures not found";
  const std::string dir = graphrt_test::fixtures_dir() + "/relax/relax_mlp";
  graphrt::RelaxVM vm = graphrt::RelaxVM::load(dir + "/deploy_relax.so");
  const std::vector<graphrt::NDArray> x = {load_npy(dir + "/input_x.npy")};
  std::vector<std::pair<std::string, bool>> calls;
  const std::vector<std::string> kernels = {"fused_matmul_add_relu", "fused_matmul1_add1", "softmax"};
  vm.set_instrument(graphrt::make_function([&](const graphrt::TVMArgs& args, graphrt::RetValue* ret) {
    const std::string symbol = args.as_string(1);
    const bool before = args.as_int(2) != 0;
    calls.emplace_back(symbol, before);
    if (before && symbol == "softmax") {
      graphrt::RetValue ignored;
      args.as_function(0)->call(graphrt::TVMArgs(args.values() + 4, args.codes() + 4, args.size() - 4), &ignored);
      ret->set_int(1);  // SKIP_RUN
    }
  }));
  expect_equal(vm.call("main", x).tensor, dir + "/output_0.npy");
  std::vector<std::string> kernel_calls;
  for (const auto& c : calls)
    if (std::find(kernels.begin(), kernels.end(), c.first) != kernels.end()) kernel_calls.push_back(c.first + (c.second ? "+" : "-"));
  EXPECT_EQ(kernel_calls, (std::vector<std::string>{"fused_matmul_add_relu+", "fused_matmul_add_relu-", "fused_matmul1_add1+",
                                                    "fused_matmul1_add1-", "softmax+"}));
  vm.set_instrument(graphrt::PackedFunc());
  calls.clear();
  expect_equal(vm.call("main", x).tensor, dir + "/output_0.npy");
  EXPECT_TRUE(calls.empty());
}

// graphrt-run writes a result's values as output_<i>.npy in TVM's depth-first
// order: an int or float (R.Prim) as a 0-d int64/float64 array, a shape
// (R.Shape) as a 1-d int64 array, beside the tensors.
TEST(RelaxCliResults, IntsFloatsAndShapesFlattenAsArrays) {
  auto global = [](const char* name, TVMValue* values, int* codes, int n) {
    graphrt::RetValue r;
    graphrt::registry_get(name)->call(graphrt::TVMArgs(values, codes, n), &r);
    return r;
  };
  TVMValue dims[2];
  dims[0].v_int64 = 2;
  dims[1].v_int64 = 3;
  int dim_codes[2] = {kDLInt, kDLInt};
  graphrt::RetValue shape = global("runtime.ShapeTuple", dims, dim_codes, 2);
  graphrt::NDArray tensor = graphrt::NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu());
  TVMValue items[3];
  items[0].v_handle = tensor.handle();
  items[1].v_int64 = -7;
  items[2] = shape.value();
  int item_codes[3] = {kTVMNDArrayHandle, kDLInt, kTVMObjectHandle};
  graphrt::RetValue tuple = global("runtime.Array", items, item_codes, 3);

  std::string structure;
  std::vector<graphrt::NDArray> out = graphrt_apps::flatten_relax_result(graphrt::Value::from(tuple), &structure);
  EXPECT_EQ(structure, "tuple[tensor, int, shape]");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), std::vector<int64_t>{4});
  EXPECT_TRUE(out[1].shape().empty());
  int64_t i = 0;
  out[1].copy_to_bytes(&i, sizeof(i));
  EXPECT_EQ(i, -7);
  ASSERT_EQ(out[2].shape(), std::vector<int64_t>{2});
  int64_t d[2] = {0, 0};
  out[2].copy_to_bytes(d, sizeof(d));
  EXPECT_EQ(d[0], 2);
  EXPECT_EQ(d[1], 3);

  graphrt::RetValue f;
  f.set_float(0.25);
  structure.clear();
  out = graphrt_apps::flatten_relax_result(graphrt::Value::from(f), &structure);
  EXPECT_EQ(structure, "float");
  double v = 0;
  out.at(0).copy_to_bytes(&v, sizeof(v));
  EXPECT_EQ(v, 0.25);
}

}  // namespace

// A VM is one call stack: threads sharing one get TVM's results or a FailedPrecondition error
// for a call that would overlap another thread's, never a crash or a wrong result.
TEST(RelaxCppApiDetails, AVmSharedByThreadsRefusesOverlappingCalls) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string dir = graphrt_test::fixtures_dir() + "/relax-ffi/relax_cnn";
  if (graphrt_test::fixtures_dir().empty() || !std::ifstream(dir + "/case.json")) GTEST_SKIP() << "no relax-ffi/relax_cnn";
  graphrt::RelaxVM vm = graphrt::RelaxVM::load(dir + "/deploy_relax.so");
  const std::vector<graphrt::NDArray> args = {load_npy(dir + "/input_x.npy")};
  const graphrt_test::Npy want = graphrt_test::read_npy(dir + "/output_0.npy");
  std::atomic<int> refused{0}, wrong{0}, other{0}, done{0};
  std::mutex message_mutex;
  std::string message;
  // Until an overlap was refused (at least 40 calls a thread, at most 20 s): on a loaded machine
  // the threads may take turns for a long while.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto work = [&] {
    for (int i = 0; i < 40 || (refused.load() == 0 && std::chrono::steady_clock::now() < deadline); ++i) {
      try {
        const std::vector<graphrt::NDArray> out = vm.call("main", args).flatten();
        std::vector<char> bytes(want.data.size());
        out.at(0).copy_to_bytes(bytes.data(), bytes.size());
        if (bytes != want.data) ++wrong;
        ++done;
      } catch (const graphrt::Error& e) {
        if (e.kind() == graphrt::ErrorKind::kFailedPrecondition &&
            std::string(e.what()).find("another thread") != std::string::npos) {
          ++refused;
        } else {
          std::lock_guard<std::mutex> lock(message_mutex);
          message = e.what();
          ++other;
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(other.load(), 0) << message;
  EXPECT_GT(refused.load(), 0) << "4 threads on one VM and no overlapping call was refused";
  EXPECT_GT(done.load(), 0);
  // Between calls the VM is free again: this thread's call runs.
  std::vector<char> bytes(want.data.size());
  vm.call("main", args).flatten().at(0).copy_to_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(bytes == want.data);
}
