#include "generation/generate_response.h"

#include "protocol/infer_response.h"

namespace graphrt_serve {

std::string generate_response_json(const GenerateResult& result, const GenerateRequest& request) {
  std::string out = "{";
  if (request.has_id) out += "\"id\":" + json_string(request.id) + ",";
  out += "\"model_name\":" + json_string(result.model_name) + ",\"model_version\":" + json_string(result.model_version) +
         ",\"output_ids\":[";
  for (size_t i = 0; i < result.output_ids.size(); ++i) out += (i ? "," : "") + std::to_string(result.output_ids[i]);
  out += "],\"finish_reason\":";
  out += result.reason == FinishReason::kNone ? std::string("null")
                                              : "\"" + std::string(finish_reason_name(result.reason)) + "\"";
  return out + "}";
}

std::string sse_event(const std::string& json) { return "data: " + json + "\n\n"; }

}  // namespace graphrt_serve
