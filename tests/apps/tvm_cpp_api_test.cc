// TVM's C++ runtime API (tvm/runtime/*.h) as deploy code uses it, on graphrt.
#include <gtest/gtest.h>

#include <cstring>
#include <tvm/runtime/c_backend_api.h>
#include <tvm/runtime/data_type.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/logging.h>
#include <tvm/runtime/module.h>
#include <tvm/runtime/ndarray.h>
#include <tvm/runtime/packed_func.h>
#include <tvm/runtime/registry.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

using tvm::runtime::DataType;
using tvm::runtime::Module;
using tvm::runtime::NDArray;
using tvm::runtime::PackedFunc;
using tvm::runtime::Registry;
using tvm::runtime::TVMArgs;
using tvm::runtime::TVMRetValue;
using tvm::runtime::TypedPackedFunc;

namespace {
// What a packed function saw: "code:value" per argument.
PackedFunc describe_args() {
  return PackedFunc([](TVMArgs args, TVMRetValue* rv) {
    std::ostringstream os;
    for (int i = 0; i < args.size(); ++i) {
      os << args.type_codes[i] << ":";
      switch (args.type_codes[i]) {
        case kTVMArgInt: os << static_cast<int64_t>(args[i]); break;
        case kTVMArgBool: os << (static_cast<bool>(args[i]) ? "true" : "false"); break;
        case kTVMArgFloat: os << static_cast<double>(args[i]); break;
        case kTVMStr: os << static_cast<std::string>(args[i]); break;
        case kDLDevice: os << static_cast<DLDevice>(args[i]).device_type; break;
        case kTVMDataType: os << static_cast<DataType>(args[i]); break;
        case kTVMNDArrayHandle: os << static_cast<NDArray>(args[i]).Shape(); break;
        case kTVMDLTensorHandle: os << static_cast<DLTensor*>(args[i])->ndim; break;
        case kTVMModuleHandle: os << static_cast<Module>(args[i]).type_key(); break;
        case kTVMPackedFuncHandle: os << (static_cast<PackedFunc>(args[i]) != nullptr); break;
        default: os << "?"; break;
      }
      os << " ";
    }
    *rv = os.str();
  });
}

// An "addone" kernel in the form TVM generates it, for the system-lib path.
int addone_kernel(TVMValue* args, int* codes, int num_args, TVMValue*, int*, void*) {
  if (num_args != 2 || codes[0] != kTVMDLTensorHandle || codes[1] != kTVMDLTensorHandle) {
    TVMAPISetLastError("addone: expects two DLTensor*");
    return -1;
  }
  auto* x = static_cast<DLTensor*>(args[0].v_handle);
  auto* y = static_cast<DLTensor*>(args[1].v_handle);
  for (int64_t i = 0; i < x->shape[0]; ++i) static_cast<float*>(y->data)[i] = static_cast<float*>(x->data)[i] + 1;
  return 0;
}
}  // namespace

TEST(TvmCppApi, PackedFuncTakesAnyMixOfArguments) {
  NDArray a = NDArray::Empty({2, 3}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  PackedFunc inner = describe_args();
  Module syslib = (*Registry::Get("runtime.SystemLib"))();
  std::string text = describe_args()(7, int64_t{-8}, true, 2.5, 1.5f, "lit", std::string("str"), DLDevice{kDLCPU, 0},
                                     DataType::Int(8), NDArray(a), const_cast<DLTensor*>(a.get()), syslib, inner);
  EXPECT_EQ(text, "0:7 0:-8 15:true 2:2.5 2:1.5 11:lit 11:str 6:1 5:int8 13:[2, 3] 7:2 9:library 10:1 ");
  EXPECT_EQ(static_cast<std::string>(describe_args()()), "");
}

TEST(TvmCppApi, ReturnValuesConvertToWhatTheCallerWants) {
  auto echo = PackedFunc([](TVMArgs args, TVMRetValue* rv) { *rv = args[0]; });
  int i = echo(41);
  int64_t i64 = echo(int64_t{1} << 40);
  double d = echo(0.25);
  bool b = echo(true);
  std::string s = echo("hello");
  DataType t = echo(DataType::Float(16));
  DLDevice dev = echo(DLDevice{kDLCPU, 3});
  EXPECT_EQ(i, 41);
  EXPECT_EQ(i64, int64_t{1} << 40);
  EXPECT_EQ(d, 0.25);
  EXPECT_TRUE(b);
  EXPECT_EQ(s, "hello");
  EXPECT_EQ(t, DataType::Float(16));
  EXPECT_EQ(dev.device_id, 3);

  NDArray a = NDArray::Empty({4}, DLDataType{kDLInt, 32, 1}, DLDevice{kDLCPU, 0});
  NDArray back = echo(a);
  EXPECT_TRUE(back.same_as(a));
  Module syslib = (*Registry::Get("runtime.SystemLib"))();
  Module m = echo(syslib);
  EXPECT_TRUE(m.same_as(syslib));
  PackedFunc f = echo(echo);
  EXPECT_TRUE(f != nullptr);
  Module none = echo(nullptr);
  EXPECT_TRUE(none == nullptr);

  // A wrong conversion is an error naming what was expected, not garbage.
  try {
    Module wrong = echo(5);
    FAIL() << "converted an int to a Module";
  } catch (const tvm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("module"), std::string::npos) << e.what();
  }
}

TEST(TvmCppApi, RegistryGetRegisterAndSystemLib) {
  EXPECT_EQ(Registry::Get("test.tvm_cpp.no_such_function"), nullptr);
  Registry::Register("test.tvm_cpp.twice").set_body([](TVMArgs args, TVMRetValue* rv) { *rv = 2 * static_cast<int>(args[0]); });
  const PackedFunc* twice = Registry::Get("test.tvm_cpp.twice");
  ASSERT_NE(twice, nullptr);
  EXPECT_EQ(static_cast<int>((*twice)(21)), 42);
  EXPECT_EQ(Registry::Get("test.tvm_cpp.twice"), twice);  // stable pointer
  EXPECT_THROW(Registry::Register("test.tvm_cpp.twice").set_body([](TVMArgs, TVMRetValue*) {}), tvm::Error);
  EXPECT_TRUE(Registry::Remove("test.tvm_cpp.twice"));
  EXPECT_EQ(Registry::Get("test.tvm_cpp.twice"), nullptr);

  // cpp_deploy.cc's Verify() on a function linked into the program (system lib).
  ASSERT_EQ(0, TVMBackendRegisterSystemLibSymbol("test_addonesys", reinterpret_cast<void*>(&addone_kernel)));
  Module mod_syslib = (*Registry::Get("runtime.SystemLib"))();
  PackedFunc f = mod_syslib.GetFunction("test_addonesys");
  ICHECK(f != nullptr);
  DLTensor* x;
  DLTensor* y;
  int64_t shape[1] = {10};
  TVMArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCPU, 0, &x);
  TVMArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCPU, 0, &y);
  for (int i = 0; i < shape[0]; ++i) static_cast<float*>(x->data)[i] = i;
  f(x, y);
  for (int i = 0; i < shape[0]; ++i) ICHECK_EQ(static_cast<float*>(y->data)[i], i + 1.0f);
  EXPECT_THROW(f(x), tvm::Error);  // the kernel's own error comes back as an exception
  TVMArrayFree(x);
  TVMArrayFree(y);
}

TEST(TvmCppApi, ModuleLoadErrorsAndLookups) {
  try {
    Module::LoadFromFile("/no/such/deploy.so");
    FAIL() << "loaded a missing file";
  } catch (const tvm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/deploy.so"), std::string::npos) << e.what();
  }
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = Module::LoadFromFile(graphrt_test::fixture_path("mlp/deploy_factory.so"));
  EXPECT_EQ(lib->type_key(), "GraphExecutorFactory");
  EXPECT_TRUE(lib.GetFunction("no_such_function") == nullptr);
  EXPECT_TRUE(lib->GetFunction("default") != nullptr);
  EXPECT_TRUE(lib.ImplementsFunction("default"));
  ASSERT_FALSE(lib.imports().empty());
  Module gmod = lib.GetFunction("default")(DLDevice{kDLCPU, 0});
  // Outputs hold results only after a run (graphrt refuses to hand out uninitialised ones).
  NDArray data = NDArray::Empty({1, 1, 28, 28}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  std::memset(data->data, 0, 28 * 28 * sizeof(float));
  gmod.GetFunction("set_input")("data", data);
  gmod.GetFunction("run")();
  NDArray out = gmod.GetFunction("get_output")(0);
  EXPECT_EQ(out.Shape(), tvm::runtime::ShapeTuple({1, 10}));
  EXPECT_EQ(out.DataType(), DataType::Float(32));
  int num_outputs = gmod.GetFunction("get_num_outputs")();
  EXPECT_EQ(num_outputs, 1);
}

TEST(TvmCppApi, NDArrayCopiesViewsAndShape) {
  DLDevice cpu{kDLCPU, 0};
  NDArray a = NDArray::Empty({2, 3}, DataType::Float(32), cpu);
  EXPECT_EQ(a.Shape().size(), 2u);
  EXPECT_EQ(a.Shape()[1], 3);
  EXPECT_TRUE(a.DataType().is_float());
  EXPECT_EQ(a.DataType().bits(), 32);
  EXPECT_TRUE(a.IsContiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data) % tvm::runtime::kAllocAlignment, 0u);
  float values[6] = {0, 1, 2, 3, 4, 5};
  a.CopyFromBytes(values, sizeof(values));
  NDArray b = NDArray::Empty({2, 3}, DataType::Float(32), cpu);
  b.CopyFrom(a);
  NDArray c = b.CopyTo(cpu);
  NDArray d = NDArray::Empty({2, 3}, DataType::Float(32), cpu);
  c.CopyTo(d);
  float got[6] = {};
  d.CopyToBytes(got, sizeof(got));
  EXPECT_EQ(0, std::memcmp(got, values, sizeof(got)));
  NDArray view = d.CreateView({3, 2}, DataType::Float(32));
  EXPECT_EQ(view->data, d->data);
  EXPECT_EQ(view.Shape(), tvm::runtime::ShapeTuple({3, 2}));
  EXPECT_THROW(a.CopyFromBytes(values, 5), tvm::Error);
  EXPECT_THROW(NDArray::Empty({2}, DataType::Float(32), cpu, "global.texture"), tvm::Error);
  DLManagedTensor* managed = a.ToDLPack();
  NDArray e = NDArray::FromDLPack(managed);
  EXPECT_EQ(e->data, a->data);
}

TEST(TvmCppApi, ChecksAndFatalLogsThrow) {
  try {
    ICHECK_EQ(3, 4) << "extra words";
    FAIL();
  } catch (const tvm::runtime::InternalError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("Check failed: 3 == 4 (3 vs. 4) : extra words"), std::string::npos) << what;
    EXPECT_NE(what.find("tvm_cpp_api_test.cc"), std::string::npos) << what;
  }
  EXPECT_THROW(ICHECK(1 + 1 == 3), tvm::Error);
  EXPECT_THROW(LOG(FATAL) << "stop", tvm::Error);
  EXPECT_THROW(ICHECK_LT(2, 1), tvm::Error);
  EXPECT_THROW(ICHECK_NOTNULL(static_cast<void*>(nullptr)), tvm::Error);
  int ok = 0;
  if (ok == 0)
    ICHECK_GE(2, 1);
  else
    FAIL() << "dangling else";
  ICHECK(true) << "never built";
  ICHECK_NE(1, 2);
  ICHECK_LE(1, 1);
  ICHECK_GT(2, 1);

  // TVMThrowLastError turns a failed C call back into the same exception type.
  TVMModuleHandle handle = nullptr;
  ASSERT_NE(0, TVMModLoadFromFile("/no/such/model.so", "so", &handle));
  EXPECT_THROW(TVMThrowLastError(), tvm::Error);
}

TEST(TvmCppApi, DataTypeAndDeviceApi) {
  EXPECT_EQ(DataType::Float(32), DataType(kDLFloat, 32, 1));
  EXPECT_EQ(DataType::Bool().bits(), 1);
  EXPECT_TRUE(DataType::Bool().is_bool());
  EXPECT_EQ(DataType::Int(16, 4).bytes(), 2);
  EXPECT_TRUE(DataType::Int(16, 4).is_vector());
  EXPECT_TRUE(DataType().is_void());
  EXPECT_EQ(tvm::runtime::DLDataType2String(DataType::UInt(8)), "uint8");
  EXPECT_EQ(DataType(tvm::runtime::String2DLDataType("float16x4")), DataType::Float(16, 4));
  std::ostringstream os;
  os << DataType::Float(64);
  EXPECT_EQ(os.str(), "float64");

  tvm::runtime::Device cpu{kDLCPU, 0};
  tvm::runtime::DeviceAPI* api = tvm::runtime::DeviceAPI::Get(cpu);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(tvm::runtime::DeviceAPI::Get(cpu), api);
  void* p = api->AllocDataSpace(cpu, 128, 64, DataType::Float(32));
  std::memset(p, 0, 128);
  api->FreeDataSpace(cpu, p);
  EXPECT_EQ(tvm::runtime::DeviceAPI::Get(DLDevice{kDLMetal, 0}, true), nullptr);  // none in graphrt
  EXPECT_THROW(tvm::runtime::DeviceAPI::Get(DLDevice{kDLMetal, 0}), tvm::Error);
}

TEST(TvmCppApi, TypedPackedFuncAndSetBodyTyped) {
  TypedPackedFunc<int(int, double)> scale = [](int a, double b) { return static_cast<int>(a * b); };
  EXPECT_EQ(scale(4, 2.5), 10);
  PackedFunc packed = scale;
  EXPECT_THROW(packed(1), tvm::Error);  // wrong argument count is an error, not a read past the end

  Registry::Register("test.tvm_cpp.concat").set_body_typed([](std::string a, const std::string& b) { return a + b; });
  const PackedFunc* concat = Registry::Get("test.tvm_cpp.concat");
  ASSERT_NE(concat, nullptr);
  std::string joined = (*concat)("ab", std::string("cd"));
  EXPECT_EQ(joined, "abcd");
  TypedPackedFunc<std::string(std::string, std::string)> typed = *concat;
  EXPECT_EQ(typed("x", "y"), "xy");
  try {
    (*concat)("only one");
    FAIL() << "called with one argument";
  } catch (const tvm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("test.tvm_cpp.concat"), std::string::npos) << e.what();
  }
  Registry::Remove("test.tvm_cpp.concat");

  int calls = 0;
  TypedPackedFunc<void(NDArray)> touch = [&calls](NDArray a) { calls += a.Shape()[0] == 3; };
  touch(NDArray::Empty({3}, DataType::Float(32), DLDevice{kDLCPU, 0}));
  EXPECT_EQ(calls, 1);
}

// TVM's documented C++ deploy of the three-file form: tvm.graph_executor.create
// from the registry, params handed over as a TVMByteArray.
TEST(TvmCppApi, ClassicThreeFileDeploy) {
  GRAPHRT_REQUIRE_FIXTURES();
  tvm::runtime::Module mod_dylib = tvm::runtime::Module::LoadFromFile(graphrt_test::fixture_path("mlp/deploy_lib.so"));
  std::vector<uint8_t> json = graphrt_test::read_file(graphrt_test::fixture_path("mlp/deploy_graph.json"));
  std::string json_data(json.begin(), json.end());
  std::vector<uint8_t> params = graphrt_test::read_file(graphrt_test::fixture_path("mlp/deploy_params.params"));
  TVMByteArray params_arr;
  params_arr.data = reinterpret_cast<const char*>(params.data());
  params_arr.size = params.size();
  int device_type = kDLCPU;
  int device_id = 0;
  tvm::runtime::Module mod =
      (*tvm::runtime::Registry::Get("tvm.graph_executor.create"))(json_data, mod_dylib, device_type, device_id);
  tvm::runtime::PackedFunc load_params = mod.GetFunction("load_params");
  load_params(params_arr);

  graphrt_test::Npy input = graphrt_test::read_npy(graphrt_test::fixture_path("mlp/input_data.npy"));
  graphrt_test::Npy expected = graphrt_test::read_npy(graphrt_test::fixture_path("mlp/output_0.npy"));
  DLDevice dev{kDLCPU, 0};
  NDArray x = NDArray::Empty(input.shape, DLDataType{kDLFloat, 32, 1}, dev);
  x.CopyFromBytes(input.data.data(), input.data.size());
  mod.GetFunction("set_input")("data", x);
  mod.GetFunction("run")();
  NDArray y = mod.GetFunction("get_output")(0);
  ASSERT_EQ(y.Shape(), tvm::runtime::ShapeTuple(expected.shape));
  std::vector<char> got(expected.data.size());
  y.CopyToBytes(got.data(), got.size());
  EXPECT_EQ(got, expected.data);  // bit-exact with TVM's own run
}
