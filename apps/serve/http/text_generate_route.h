// Triton's generate and generate_stream with text, on an MLC-LLM model folder:
// {"text_input", "parameters", ...} -> {"model_name", "model_version", "text_output",
// "finish_reason"}; generate_stream sends one such event per piece of text.
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
// `stream`: the generate_stream route (a top-level "stream" may ask the same of generate).
void text_generate(const httplib::Request& req, httplib::Response& res, std::shared_ptr<ServedModel> model,
                   bool stream, const CloseWatchFactory& watch_close);

}  // namespace graphrt_serve
