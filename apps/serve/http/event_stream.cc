#include "http/event_stream.h"

#include <httplib.h>

namespace graphrt_serve {

const char* const kEventStreamType = "text/event-stream";

void start_event_stream(httplib::Response& res, EventProducer produce) {
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");  // proxies (nginx) pass each event on at once
  res.set_chunked_content_provider(kEventStreamType, [produce](size_t, httplib::DataSink& sink) {
    std::string events;
    bool last = false;
    if (!produce(&events, &last)) return false;
    if (!events.empty() && !sink.write(events.data(), events.size())) return false;
    if (last) sink.done();
    return true;
  });
}

}  // namespace graphrt_serve
