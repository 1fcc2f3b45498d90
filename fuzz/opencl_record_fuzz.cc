// libFuzzer target: the opencl module record's reader (backends/opencl/
// opencl_record.cc) in both layouts, then the launch planning of every
// function it holds. Any input either decodes into a table whose every
// function has its own source, or ends in one graphrt::Error; anything else
// (another exception, a crash) is a finding. No driver is opened.
#include <cstddef>
#include <cstdint>

#include "graphrt/blob_reader.h"
#include "graphrt/error.h"
#include "backends/opencl/opencl_launch.h"
#include "backends/opencl/opencl_record.h"

using namespace graphrt::opencl_backend;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (OpenclPayloadFormat format : {OpenclPayloadFormat::kRecord, OpenclPayloadFormat::kWithArgExtraTags}) {
    try {
      graphrt::BlobReader reader(data, size, "fuzz/opencl");
      const OpenclModuleImage image = decode_opencl_payload(reader, format);
      for (const auto& entry : image.fmap) {
        if (!image.kernel_sources.count(entry.first)) __builtin_trap();
        const KernelPlan plan = plan_kernel(entry.second);
        if (plan.work_dim < 1 || plan.work_dim > 3) __builtin_trap();
      }
    } catch (const graphrt::Error&) {
    }
  }
  return 0;
}
