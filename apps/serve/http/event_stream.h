// A response of server-sent events (text/event-stream) written as its events are made: each
// goes to the socket in its own chunk when it is ready, and the stream is never compressed
// (a compressor holds the events back until it has enough to emit, so a client that accepts
// gzip, as Python requests and Node's fetch do, would get them all at the end).
#pragma once

#include <functional>
#include <string>

namespace httplib {
struct Response;
}

namespace graphrt_serve {

// Writes the next events into `out` (waiting for them); sets `last` when none follow; false
// ends the response at once (the client went away).
using EventProducer = std::function<bool(std::string* out, bool* last)>;

// Makes `res` (status set by the caller) a chunked event stream fed by `produce`.
void start_event_stream(httplib::Response& res, EventProducer produce);

// The content type of event streams: exactly this, which the HTTP library never compresses.
extern const char* const kEventStreamType;

}  // namespace graphrt_serve
