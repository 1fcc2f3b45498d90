#include "http/token_generate_route.h"

#include <httplib.h>

#include "generation/generate_request.h"
#include "generation/generate_response.h"
#include "generation/generator.h"
#include "graphrt/error.h"
#include "http/event_stream.h"
#include "http/route_refusal.h"
#include "http/oip_reply.h"
#include "protocol/infer_response.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

// A generate request in flight: its tokens, the watch that cancels them when the client goes
// away during the handler, and the model they come from. A stream's is owned by its event
// source, which the connection layer holds after the handler returned; when the response ends
// (done, the client gone, the server stopping) the request is cancelled, a no-op once it finished.
struct GenerateStreamState {
  std::shared_ptr<ServedModel> model;
  GenerateRequest request;
  std::shared_ptr<TokenStream> tokens;
  std::shared_ptr<void> watch;
  ~GenerateStreamState() {
    watch.reset();
    if (tokens) tokens->cancel();
  }

};

// The stream's events: one per token; a failure is an event too (the stream's head goes with
// its first event, whatever it is).
class TokenEventSource : public EventSource {
 public:
  explicit TokenEventSource(std::shared_ptr<GenerateStreamState> state) : state_(std::move(state)) {}

  EventPoll poll() override {
    EventPoll p;
    TokenEvent e;
    if (!state_->tokens->try_next(&e)) return p;
    if (e.kind == TokenEvent::kCancelled) {
      p.kind = EventPoll::kGone;
      return p;
    }
    p.kind = EventPoll::kEvents;
    p.last = e.kind != TokenEvent::kToken || e.reason != FinishReason::kNone;
    const ServedModel& model = *state_->model;
    p.text = e.kind == TokenEvent::kFailed
                 ? sse_event(error_json(e.error))
                 : sse_event(generate_response_json({model.name(), model.version(), {e.token}, e.reason},
                                                    state_->request));
    return p;
  }

  void set_ready_listener(std::function<void()> ready) override { state_->tokens->set_listener(std::move(ready)); }

  std::string cut_events(const std::string& why) override { return sse_event(error_json(why)); }

 private:
  std::shared_ptr<GenerateStreamState> state_;
};

Generator& generator_of(const ServedModel& model) {
  if (!model.generator())
    throw Error(ErrorKind::kUnsupported, "'" + model.name() + "' is not a language model on a KV cache: generate "
                                         "serves Relax executables with MLC's create_tir_paged_kv_cache, prefill and "
                                         "decode functions, or those config.json's \"generation\" names")
        .with("field", "generation");
  return *model.generator();
}

// Waits for every token; the response, or the error that ended the request.
std::string collect_tokens(GenerateStreamState& state) {
  GenerateResult result{state.model->name(), state.model->version(), {}, FinishReason::kNone};
  for (;;) {
    const TokenEvent e = state.tokens->next();
    if (e.kind == TokenEvent::kFailed) throw Error(e.error_kind, e.error);
    if (e.kind == TokenEvent::kCancelled) throw Error(ErrorKind::kInterrupted, "the client went away");
    result.output_ids.push_back(e.token);
    if (e.reason == FinishReason::kNone) continue;
    result.reason = e.reason;
    return generate_response_json(result, state.request);
  }
}


}  // namespace

void token_generate(const httplib::Request& req, httplib::Response& res, std::shared_ptr<ServedModel> model,
                    bool stream, const CloseWatchFactory& watch_close) {
  Generator& generator = generator_of(*model);
  auto state = std::make_shared<GenerateStreamState>();
  state->model = model;
  counting_refusal(*model, [&] { state->request = decode_generate_request(req.body); });
  state->tokens = generator.submit(state->request);
  std::shared_ptr<TokenStream> tokens = state->tokens;
  if (watch_close) state->watch = watch_close([tokens] { tokens->cancel(); });
  if (stream) return start_event_stream(req, res, std::make_unique<TokenEventSource>(std::move(state)));
  reply_json(res, 200, collect_tokens(*state));
}

}  // namespace graphrt_serve
