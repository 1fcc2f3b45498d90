// A library that is not a TVM module (no blob, no TVM-ABI symbol) is refused at
// load; its functions are called as packed functions only with trust_exports.
#include <dlfcn.h>

#include <cmath>

#include "fixture_cases.h"
#include "graphrt/c_api.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

// The path of the libm this process uses, as the dynamic linker reports it.
std::string libm_path() {
  Dl_info info;
  double (*cosine)(double) = &std::cos;
  if (!dladdr(reinterpret_cast<void*>(cosine), &info) || !info.dli_fname) return "";
  return info.dli_fname;
}

LoadOptions with_loader(const std::string& loader, bool trust_exports = false) {
  LoadOptions options;
  options.loader = loader;
  options.trust_exports = trust_exports;
  return options;
}

// `suggests_trust`: whether the message offers trust_exports, which only a library of
// hand-written packed functions can use (never a system library such as libm).
void expect_refused_as_not_tvm(const std::string& path, const LoadOptions& options, bool suggests_trust) {
  try {
    load_module(path, options);
    FAIL() << path << " (" << options.loader << "): expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a TVM module"), std::string::npos) << msg;
    EXPECT_NE(msg.find("__tvm_dev_mblob"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("trust_exports") != std::string::npos, suggests_trust) << msg;
    if (!suggests_trust) {
      EXPECT_NE(msg.find("looks like a system library, not a model"), std::string::npos) << msg;
    }
    EXPECT_EQ(e.context_value("file"), path) << msg;
    // The option, for the apps to name their flag, only where opting in could help; the
    // library names no flag.
    EXPECT_EQ(e.context_value("option"), suggests_trust ? "trust_exports" : "") << msg;
    EXPECT_EQ(msg.find("--"), std::string::npos) << msg;
  }
}

}  // namespace

TEST(NotATvmLibrary, LibmIsRefusedAtLoad) {
  const std::string libm = libm_path();
  ASSERT_NE(libm.find("libm"), std::string::npos) << libm;
  expect_refused_as_not_tvm(libm, with_loader("dlopen"), false);
}

TEST(NotATvmLibrary, HandWrittenKernelsNeedTrustExports) {
  for (const char* loader : {"dlopen", "elf"}) {
    SCOPED_TRACE(loader);
    expect_refused_as_not_tvm(GRAPHRT_HAND_WRITTEN_KERNELS, with_loader(loader), true);
    Module lib = load_module(GRAPHRT_HAND_WRITTEN_KERNELS, with_loader(loader, true));
    NDArray x = NDArray::empty({3}, DLDataType{kDLFloat, 32, 1}, cpu());
    NDArray y = NDArray::empty({3}, DLDataType{kDLFloat, 32, 1}, cpu());
    const float in[3] = {-1.5f, 0.0f, 2.25f};
    std::copy(in, in + 3, static_cast<float*>(x->data));
    ArgList args;
    args.add_tensor(x.handle());
    args.add_tensor(y.handle());
    call_function(lib->require_function("add_one"), args);
    const float* out = static_cast<const float*>(y->data);
    EXPECT_EQ(out[0], -0.5f);
    EXPECT_EQ(out[1], 1.0f);
    EXPECT_EQ(out[2], 3.25f);
  }
}

TEST(NotATvmLibrary, CApiFlagOptsIn) {
  TVMModuleHandle mod = nullptr;
  EXPECT_EQ(-GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_module_load(GRAPHRT_HAND_WRITTEN_KERNELS, nullptr, &mod));
  EXPECT_NE(std::string(TVMGetLastError()).find("not a TVM module"), std::string::npos) << TVMGetLastError();
  EXPECT_EQ(-GRAPHRT_ERROR_UNSUPPORTED, graphrt_module_load_with_flags(GRAPHRT_HAND_WRITTEN_KERNELS, nullptr, 2, &mod));
  EXPECT_NE(std::string(TVMGetLastError()).find("unknown load flags"), std::string::npos) << TVMGetLastError();
  ASSERT_EQ(0, graphrt_module_load_with_flags(GRAPHRT_HAND_WRITTEN_KERNELS, nullptr, GRAPHRT_LOAD_TRUST_EXPORTS, &mod))
      << TVMGetLastError();
  TVMFunctionHandle fn = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "add_one", 0, &fn)) << TVMGetLastError();
  EXPECT_NE(fn, nullptr);
  TVMFuncFree(fn);
  TVMModFree(mod);
}

TEST(NotATvmLibrary, TvmLibrariesWithoutBlobStillLoad) {
  // A kernel library has no blob; its context-function slots say it is TVM's.
  GRAPHRT_REQUIRE_FIXTURES();
  for (const char* loader : {"dlopen", "elf"}) {
    Module lib = load_module(fixture_path("mlp/deploy_lib.so"), with_loader(loader));
    EXPECT_EQ(lib->type_key(), "library") << loader;
    EXPECT_TRUE(lib->get_function("tvmgen_default_fused_nn_softmax")) << loader;
  }
}

TEST(NotATvmLibrary, DataSymbolsAreNeverFunctions) {
  // The runtime's slots and the blob are data: calling them would jump into data.
  GRAPHRT_REQUIRE_FIXTURES();
  for (const char* loader : {"dlopen", "elf"}) {
    Module lib = load_module(fixture_path("mlp/deploy_factory.so"), with_loader(loader));
    const Module& kernels = lib->imports().empty() ? lib : lib->imports()[0];
    for (const char* name : {"__TVMAPISetLastError", "__tvm_dev_mblob", "__tvm_module_ctx"})
      EXPECT_FALSE(kernels->get_function(name, false)) << loader << ": " << name;
  }
}
