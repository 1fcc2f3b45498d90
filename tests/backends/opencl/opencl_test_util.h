// Shared by the OpenCL back end's tests: crafted "opencl" modules and the
// rule for when a machine without an OpenCL device skips.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/error.h"
#include "backends/opencl/opencl_device_api.h"
#include "backends/opencl/opencl_module.h"
#include "backends/opencl/opencl_record.h"

namespace opencl_test {

// In CI (CI=true, where scripts/setup.sh installs PoCL) or with
// GRAPHRT_REQUIRE_OPENCL=1, a machine without an OpenCL device fails the
// device tests instead of skipping them.
inline bool opencl_required() {
  const char* ci = std::getenv("CI");
  const char* req = std::getenv("GRAPHRT_REQUIRE_OPENCL");
  return (ci && std::string(ci) == "true") || (req && std::string(req) == "1");
}

// "" when opencl:0 of the default runtime can be used, else why not.
inline std::string unavailable_reason() {
  try {
    graphrt::opencl_backend::opencl_device_api()->check_available(DLDevice{kDLOpenCL, 0});
    return "";
  } catch (const graphrt::Error& e) {
    return e.message();
  }
}

inline graphrt::opencl_backend::OpenclFunctionInfo function(const std::string& name, std::vector<DLDataType> args,
                                                            std::vector<std::string> tags) {
  graphrt::opencl_backend::OpenclFunctionInfo f;
  f.name = name;
  f.arg_types = std::move(args);
  f.launch_param_tags = std::move(tags);
  return f;
}

inline graphrt::opencl_backend::OpenclModuleImage image(std::vector<graphrt::opencl_backend::OpenclFunctionInfo> fs,
                                                         std::string code, std::string fmt = "cl") {
  graphrt::opencl_backend::OpenclModuleImage im;
  im.fmt = std::move(fmt);
  for (auto& f : fs) im.fmap[f.name] = f;
  im.code = std::move(code);
  return im;
}

// Loads `im` through the record loader's path (encoded, then decoded), on `api`.
inline graphrt::Module load(const graphrt::opencl_backend::OpenclModuleImage& im,
                            std::shared_ptr<graphrt::opencl_backend::OpenclDeviceAPI> api) {
  using namespace graphrt::opencl_backend;
  const std::string bytes = encode_opencl_payload(im, OpenclPayloadFormat::kWithArgExtraTags);
  graphrt::BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "crafted");
  return load_opencl_module(reader, std::move(api), OpenclPayloadFormat::kWithArgExtraTags);
}

inline const DLDataType kHandle{kDLOpaqueHandle, 64, 1};
inline const DLDataType kI32{kDLInt, 32, 1};
inline const DLDataType kI64{kDLInt, 64, 1};
inline const DLDataType kF32{kDLFloat, 32, 1};

}  // namespace opencl_test

#define REQUIRE_OPENCL()                                                                          \
  do {                                                                                            \
    const std::string why_ = opencl_test::unavailable_reason();                                   \
    if (!why_.empty() && opencl_test::opencl_required())                                          \
      FAIL() << "no usable OpenCL device, and CI / GRAPHRT_REQUIRE_OPENCL=1 requires one: " << why_; \
    if (!why_.empty()) GTEST_SKIP() << "no usable OpenCL device: " << why_;                       \
  } while (0)
