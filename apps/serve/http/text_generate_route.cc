#include "http/text_generate_route.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "generation/generate_response.h"
#include "generation/text_engine.h"
#include "generation/text_generate_request.h"
#include "graphrt/error.h"
#include "http/event_stream.h"
#include "protocol/infer_response.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using json = nlohmann::json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

struct TextGenerateCall {
  std::shared_ptr<ServedModel> model;
  TextGenerateRequest request;
  std::shared_ptr<TextStream> stream;
  std::shared_ptr<void> watch;
  bool has_ahead = false;
  TextEvent ahead;

  ~TextGenerateCall() {
    watch.reset();
    if (stream) stream->cancel();
  }

  std::string response_json(const std::string& text, const char* finish_reason) const {
    json j = {{"model_name", model->name()}, {"model_version", model->version()}, {"text_output", text}};
    if (request.has_id) j["id"] = request.id;
    j["finish_reason"] = finish_reason && *finish_reason ? json(finish_reason) : json(nullptr);
    return dump(j);
  }

  TextEvent next() {
    if (has_ahead) {
      has_ahead = false;
      return std::move(ahead);
    }
    return stream->next();
  }

  bool next_event(std::string* out, bool* last) {
    const TextEvent e = next();
    if (e.kind == TextEvent::kCancelled) return false;
    *last = e.kind != TextEvent::kPiece;
    if (e.kind == TextEvent::kFailed) *out = sse_event(error_json(e.error));
    else if (e.kind == TextEvent::kPiece) *out = sse_event(response_json(e.piece, nullptr));
    else *out = sse_event(response_json("", graphrt::finish_reason_name(e.result.finish_reason)));
    return true;
  }
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
  call->request = decode_text_generate_request(req.body);
  TextJob job;
  job.prompt = call->request.text_input;
  job.config = graphrt::parse_generation_config(call->request.sampling_json, engine.defaults());
  graphrt::validate_generation_config(job.config, engine.vocab_size());
  call->stream = engine.submit(std::move(job));
  if (watch_close) call->watch = watch_close([s = call->stream] { s->cancel(); });
  if (stream || call->request.stream) {
    call->ahead = call->stream->next();  // errors before the first piece are the HTTP answer
    call->has_ahead = true;
    if (call->ahead.kind == TextEvent::kFailed || call->ahead.kind == TextEvent::kCancelled) rethrow(call->ahead);
    res.status = 200;
    start_event_stream(res, [call](std::string* out, bool* last) { return call->next_event(out, last); });
    return;
  }
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
