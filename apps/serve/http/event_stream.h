// A response of server-sent events (text/event-stream), written as its events are made. The
// handler does not write it: it hands the connection layer an EventSource, and once the handler
// has returned, the connection's reactor writes each event as soon as the source has it and the
// socket takes it. An open stream costs a bounded buffer and a descriptor, not a worker, however
// slowly its events come or its client reads. Events are never compressed (a compressor holds
// them back until it has enough to emit, so a client that accepts gzip, as Python requests and
// Node's fetch do, would get them all at the end) and each goes out as it is made: in its own
// chunk over HTTP/1.1, and as they come in a body delimited by the connection's close over
// HTTP/1.0, which has no chunked encoding.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace graphrt_serve {

// What an EventSource has now.
struct EventPoll {
  enum Kind {
    kPending,  // nothing yet: the ready listener is called when there may be more
    kEvents,   // `text` holds events (SSE text); `last`: nothing follows
    kRefused,  // before any event: the request failed, and the answer is `status` with the JSON `text`
    kGone,     // the request was cancelled (its client went away): the connection closes
  } kind = kPending;
  std::string text;
  bool last = false;
  int status = 0;
};

// A stream's events, as the request's engine makes them. Its destruction cancels the request
// if it is still running (the engine then frees its sequence).
class EventSource {
 public:
  virtual ~EventSource() = default;
  // Never waits.
  virtual EventPoll poll() = 0;
  // `ready` is called, from any thread, whenever poll() may have more; null stops the calls
  // (none is running once this returns).
  virtual void set_ready_listener(std::function<void()> ready) = 0;
  // The server stops the stream before its end (its exit timeout passed): the events that end
  // it in the protocol's form (an error event saying `why`, and a closing event where there is one).
  virtual std::string cut_events(const std::string& why) = 0;
};

// Makes the answer to `req` the event stream of `source`: status 200 once its first event is
// there (or the error it is refused with), written by the connection layer after the handler returns.
void start_event_stream(const httplib::Request& req, httplib::Response& res, std::unique_ptr<EventSource> source);

// The content type of event streams: exactly this, which the HTTP library never compresses.
extern const char* const kEventStreamType;

}  // namespace graphrt_serve
