// OpenAI's API on the HTTP port, for the repository's MLC-LLM model folders: GET /v1/models,
// POST /v1/completions and /v1/chat/completions, plain or streamed (server-sent events, never
// compressed, each written as it is made), errors as OpenAI's error object, and the optional
// API key (Authorization: Bearer).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "models/repository.h"

namespace httplib {
class Server;
}

namespace graphrt_serve {

// While a handler runs: calls the function once if the client of the request being handled on
// this thread goes away; the watch ends when the returned handle goes (null: no watch).
using CloseWatchFactory = std::function<std::shared_ptr<void>(std::function<void()>)>;

// `api_key` "" takes every request.
void add_openai_routes(httplib::Server& server, Repository* repository, std::string api_key,
                       CloseWatchFactory watch_close);

}  // namespace graphrt_serve
