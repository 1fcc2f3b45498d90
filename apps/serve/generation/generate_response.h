// The generate extension's answers: one JSON object for /generate, and for
// /generate_stream one server-sent event per token ("data: {...}\n\n"), the
// last carrying finish_reason; an error after the stream began is an event
// {"error": "..."} (the status line was already sent).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generation/generate_request.h"
#include "generation/token_stream.h"

namespace graphrt_serve {

struct GenerateResult {
  std::string model_name, model_version;
  std::vector<int32_t> output_ids;
  FinishReason reason = FinishReason::kNone;  // kNone: more tokens follow (a stream event)
};

// {"id"?, "model_name", "model_version", "output_ids": [...], "finish_reason": "stop"|"length"|null}
std::string generate_response_json(const GenerateResult& result, const GenerateRequest& request);

// "data: <json>\n\n"
std::string sse_event(const std::string& json);

}  // namespace graphrt_serve
