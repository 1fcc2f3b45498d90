// libFuzzer target: the reader of a case file's "steps" (graphrt-run --steps,
// apps/common/relax_steps.cc). Any input either reads as steps of the checked
// form or ends in one graphrt::Error; anything else (another exception, a
// crash, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/relax_steps.h"
#include "graphrt/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    graphrt_apps::check_relax_steps(std::string(reinterpret_cast<const char*>(data), size), "fuzz/case.json");
  } catch (const graphrt::Error&) {
  }
  return 0;
}
