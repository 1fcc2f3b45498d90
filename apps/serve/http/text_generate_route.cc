#include "http/text_generate_route.h"

#include <httplib.h>

#include "generation/generate_response.h"
#include "generation/text_engine.h"
#include "generation/text_generate_request.h"
#include "graphrt/error.h"
#include "graphrt/json_writer.h"
#include "http/event_stream.h"
#include "http/route_refusal.h"
#include "protocol/infer_response.h"
#include "status.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

struct TextGenerateCall {
  std::shared_ptr<ServedModel> model;
  TextGenerateRequest request;
  std::shared_ptr<TextStream> stream;
  std::shared_ptr<void> watch;

  ~TextGenerateCall() {
    watch.reset();
    if (stream) stream->cancel();
  }

  // Text that is not UTF-8 (a token's piece of a character) is written with U+FFFD (json_writer.h).
  std::string response_json(const std::string& text, const char* finish_reason) const {
    graphrt::JsonWriter w;
    w.begin_object();
    if (request.has_id) w.key("id").string(request.id);
    w.key("model_name").string(model->name()).key("model_version").string(model->version());
    w.key("text_output").string(text).key("finish_reason");
    if (finish_reason && *finish_reason) w.string(finish_reason);
    else w.null();
    return w.end_object().take();
  }

};

// The stream's events: one per piece of text, the last with the finish reason. A failure before
// the first is the HTTP answer (a prompt too long for the context), after it an event.
class TextGenerateEventSource : public EventSource {
 public:
  explicit TextGenerateEventSource(std::shared_ptr<TextGenerateCall> call) : call_(std::move(call)) {}

  EventPoll poll() override {
    EventPoll p;
    TextEvent e;
    if (!call_->stream->try_next(&e)) return p;
    if (e.kind == TextEvent::kCancelled) {
      p.kind = EventPoll::kGone;
      return p;
    }
    if (e.kind == TextEvent::kFailed && !started_) {
      p.kind = EventPoll::kRefused;
      p.status = http_status(e.error_kind);
      Error error(e.error_kind, e.error);
      if (!e.field.empty()) error.with("field", e.field);
      p.text = error_json(error.with("model", call_->model->name()).what());
      return p;
    }
    started_ = true;
    p.kind = EventPoll::kEvents;
    p.last = e.kind != TextEvent::kPiece;
    if (e.kind == TextEvent::kFailed) p.text = sse_event(error_json(e.error));
    else if (e.kind == TextEvent::kPiece) p.text = sse_event(call_->response_json(e.piece, nullptr));
    else p.text = sse_event(call_->response_json("", graphrt::finish_reason_name(e.result.finish_reason)));
    return p;
  }

  void set_ready_listener(std::function<void()> ready) override { call_->stream->set_listener(std::move(ready)); }

  std::string cut_events(const std::string& why) override { return sse_event(error_json(why)); }

 private:
  std::shared_ptr<TextGenerateCall> call_;
  bool started_ = false;
};

[[noreturn]] void rethrow(const TextEvent& e) {
  if (e.kind == TextEvent::kCancelled) throw Error(ErrorKind::kInterrupted, "the client went away");
  Error error(e.error_kind, e.error);
  if (!e.field.empty()) error.with("field", e.field);
  throw error;
}

}  // namespace

void text_generate(const httplib::Request& req, httplib::Response& res, std::shared_ptr<ServedModel> model,
                   bool stream, const CloseWatchFactory& watch_close) {
  TextEngine& engine = *model->text_engine();
  auto call = std::make_shared<TextGenerateCall>();
  call->model = model;
  TextJob job;
  counting_refusal(*model, [&] {
    call->request = decode_text_generate_request(req.body);
    job.prompt = call->request.text_input;
    job.config = graphrt::parse_generation_config(call->request.sampling_json, engine.defaults());
    graphrt::validate_generation_config(job.config, engine.vocab_size());
  });
  call->stream = engine.submit(std::move(job));
  if (watch_close) call->watch = watch_close([s = call->stream] { s->cancel(); });
  if (stream || call->request.stream)
    return start_event_stream(req, res, std::make_unique<TextGenerateEventSource>(std::move(call)));
  std::string text;
  for (;;) {
    TextEvent e = call->stream->next();
    if (e.kind == TextEvent::kPiece) continue;
    if (e.kind != TextEvent::kDone) rethrow(e);
    res.status = 200;
    res.set_content(call->response_json(e.result.text, graphrt::finish_reason_name(e.result.finish_reason)),
                    "application/json");
    return;
  }
}

}  // namespace graphrt_serve
