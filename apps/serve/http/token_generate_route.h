// Triton's generate and generate_stream with token ids, on a language model on a KV cache
// (generation/): {"input_ids", "parameters"} -> {"output_ids", "finish_reason"}; the stream
// sends one event per token.
#pragma once

#include <memory>

#include "http/openai_routes.h"  // CloseWatchFactory
#include "models/served_model.h"

namespace httplib {
struct Request;
struct Response;
}

namespace graphrt_serve {

// Answers the request; throws graphrt::Error naming the field at fault (before any byte is sent).
void token_generate(const httplib::Request& req, httplib::Response& res, std::shared_ptr<ServedModel> model,
                    bool stream, const CloseWatchFactory& watch_close);

}  // namespace graphrt_serve
