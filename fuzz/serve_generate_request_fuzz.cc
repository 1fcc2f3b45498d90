// libFuzzer target: graphrt-serve's generate request decoder (Triton's generate extension with
// token ids: the JSON body of POST /v2/models/M/generate and generate_stream). What it accepts
// holds at least one token id and a max_tokens of 0 (not given) or more.
#include <cstddef>
#include <cstdint>
#include <string>

#include "generation/generate_request.h"
#include "graphrt/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  try {
    const graphrt_serve::GenerateRequest r = graphrt_serve::decode_generate_request(body);
    if (r.input_ids.empty() || r.max_tokens < 0) __builtin_trap();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
