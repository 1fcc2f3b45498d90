#include "backends/opencl/register.h"

#include "graphrt/binary_loader.h"
#include "graphrt/device_api.h"
#include "backends/opencl/opencl_device_api.h"
#include "backends/opencl/opencl_module.h"

namespace graphrt {
namespace opencl_backend {

// The runtime owns its OpenCL device API: its device table holds it, and so
// do its "opencl" record loaders, whose modules launch on it.
void register_backend(Runtime& runtime) {
  auto api = std::make_shared<OpenclDeviceAPI>();
  runtime.register_device_api(kDLOpenCL, api);
  runtime.register_binary_loader("opencl", [api](BlobReader& reader) {
    return load_opencl_module(reader, api, OpenclPayloadFormat::kRecord);
  });
  runtime.register_bytes_loader("opencl", [api](BlobReader& bytes) {
    Module m = load_opencl_module(bytes, api, OpenclPayloadFormat::kWithArgExtraTags);
    if (!bytes.at_end())
      throw bytes.error(std::to_string(bytes.remaining()) + " bytes after the opencl module's source")
          .with("module", "opencl");
    return m;
  });
}

}  // namespace opencl_backend
}  // namespace graphrt
