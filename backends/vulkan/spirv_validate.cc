#include "backends/vulkan/spirv_validate.h"

#include <spirv-tools/libspirv.h>

#include <memory>

namespace graphrt {
namespace vulkan_backend {

namespace {

// The oldest Vulkan environment that takes the module's SPIR-V version
// (header word 1: 0x00MMmm00), so no shader is refused for its version alone.
spv_target_env environment_for(uint32_t version_word) {
  uint32_t minor = (version_word >> 8) & 0xff;
  if (minor <= 3) return SPV_ENV_VULKAN_1_1;
  if (minor == 4) return SPV_ENV_VULKAN_1_1_SPIRV_1_4;
  if (minor == 5) return SPV_ENV_VULKAN_1_2;
  return SPV_ENV_VULKAN_1_3;
}

std::string one_line(const char* text) {
  constexpr size_t kMax = 400;
  std::string out;
  for (const char* p = text; p && *p && out.size() < kMax; ++p) out.push_back(*p == '\n' || *p == '\r' ? ' ' : *p);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

struct ContextDeleter {
  void operator()(spv_context c) const { spvContextDestroy(c); }
};
struct DiagnosticDeleter {
  void operator()(spv_diagnostic d) const { spvDiagnosticDestroy(d); }
};

}  // namespace

std::string validate_spirv(const std::vector<uint32_t>& words) {
  if (words.size() < 5) return "a SPIR-V module has a 5-word header; this shader has " + std::to_string(words.size()) + " words";
  if (words[0] != 0x07230203) return "the first word is not the SPIR-V magic number 0x07230203";
  std::unique_ptr<spv_context_t, ContextDeleter> context(spvContextCreate(environment_for(words[1])));
  if (!context) return "SPIRV-Tools could not create a validation context";
  spv_diagnostic raw = nullptr;
  spv_result_t r = spvValidateBinary(context.get(), words.data(), words.size(), &raw);
  std::unique_ptr<spv_diagnostic_t, DiagnosticDeleter> diagnostic(raw);
  if (r == SPV_SUCCESS) return "";
  std::string why = diagnostic && diagnostic->error ? one_line(diagnostic->error) : "";
  if (why.empty()) why = "spvValidateBinary returned " + std::to_string(static_cast<int>(r));
  return why;
}

}  // namespace vulkan_backend
}  // namespace graphrt
