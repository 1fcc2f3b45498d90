#include "http/event_stream.h"

#include <httplib.h>

#include <cctype>

#include "http/connection_reactor.h"

namespace graphrt_serve {

const char* const kEventStreamType = "text/event-stream";

namespace {

bool asks_to_close(const httplib::Request& req) {
  std::string value = req.get_header_value("Connection");
  for (char& ch : value) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return value.find("close") != std::string::npos;
}

}  // namespace

void start_event_stream(const httplib::Request& req, httplib::Response& res, std::unique_ptr<EventSource> source) {
  const bool http10 = req.version == "HTTP/1.0";
  answer_with_stream(std::move(source), http10, !http10 && !asks_to_close(req));
  res.status = 200;
}

}  // namespace graphrt_serve
