#include "http/openai_routes.h"

#include <httplib.h>

#include <vector>

#include "generation/text_engine.h"
#include "graphrt/error.h"
#include "http/api_key.h"
#include "http/event_stream.h"
#include "http/route_refusal.h"
#include "openai/openai_request.h"
#include "openai/openai_response.h"
#include "status.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

const char* kJson = "application/json";

void reply_openai_error(httplib::Response& res, int status, const std::string& message, const std::string& param,
                        const std::string& code = "") {
  res.status = status;
  res.set_content(openai_error_json(message, openai_error_type(status), param, code), kJson);
}

void reply_error(httplib::Response& res, const Error& e) {
  const int status = http_status(e.kind());
  std::string param = e.context_value("field");
  const std::string code = e.context_value("code");
  reply_openai_error(res, status, e.what(), param, code);
}

// The repository's ready MLC-LLM models.
std::vector<std::string> text_model_names(Repository& repository) {
  std::vector<std::string> names;
  for (const IndexEntry& e : repository.index(true)) {
    if (!names.empty() && names.back() == e.name) continue;
    try {
      if (repository.find(e.name, "")->text_engine()) names.push_back(e.name);
    } catch (const Error&) {
      // unloaded since the index was taken
    }
  }
  return names;
}

// The request's model: the one named, or the only one served when none is.
std::shared_ptr<ServedModel> find_text_model(Repository& repository, const std::string& name) {
  if (name.empty()) {
    const std::vector<std::string> names = text_model_names(repository);
    if (names.size() != 1)
      throw Error(ErrorKind::kInvalidArgument, "model is required: this server serves " +
                                                   std::to_string(names.size()) + " language models (GET /v1/models)")
          .with("field", "model");
    return repository.find(names[0], "");
  }
  std::shared_ptr<ServedModel> model;
  try {
    model = repository.find(name, "");
  } catch (Error& e) {
    e.with("field", "model");
    if (e.kind() == ErrorKind::kNotFound) e.with("code", "model_not_found");
    throw;
  }
  if (!model->text_engine())
    throw Error(ErrorKind::kNotFound, "the model '" + name.substr(0, 200) + "' is not a language model (an MLC-LLM "
                                      "model folder); GET /v1/models lists those served")
        .with("field", "model").with("code", "model_not_found");
  return model;
}

// One response on its way: the choices' streams, sent in order (the engine decodes them together).
struct OpenAICall {
  OpenAIRequest request;
  OpenAIResponseHead head;
  std::shared_ptr<ServedModel> model;  // held while the call runs
  std::vector<std::shared_ptr<TextStream>> streams;
  std::shared_ptr<void> watch;
  bool logprobs = false;
  // Streaming: the choice being sent, whether its first chunk went, whether any event went.
  size_t current = 0;
  bool sent_first = false;
  bool started = false;
  int64_t prompt_tokens = 0, completion_tokens = 0;

  ~OpenAICall() {
    watch.reset();
    for (auto& s : streams) s->cancel();
  }

  // The events ready now, as SSE text (never waits). A failure before the first event is the
  // HTTP answer (a request the engine refuses, as a prompt too long for the context).
  EventPoll poll_events() {
    EventPoll p;
    TextEvent e;
    if (!streams[current]->try_next(&e)) return p;
    const int64_t index = static_cast<int64_t>(current);
    if (e.kind == TextEvent::kCancelled) {
      p.kind = EventPoll::kGone;
      return p;
    }
    const bool first = !started;
    started = true;
    p.kind = EventPoll::kEvents;
    if (e.kind == TextEvent::kFailed) {
      const int status = http_status(e.error_kind);
      const std::string error = openai_error_json(e.error, openai_error_type(status), e.field, "");
      if (first) {
        p.kind = EventPoll::kRefused;
        p.status = status;
        p.text = error;
        return p;
      }
      p.text = "data: " + error + "\n\n" + openai_done_event();
      p.last = true;
      return p;
    }
    if (e.kind == TextEvent::kPiece) {
      p.text = openai_chunk_event(head, index, e.piece, "", !sent_first);
      sent_first = true;
      return p;
    }
    const graphrt::GenerationResult& r = e.result;
    p.text = openai_chunk_event(head, index, "", graphrt::finish_reason_name(r.finish_reason), !sent_first);
    prompt_tokens = r.prompt_tokens;
    completion_tokens += static_cast<int64_t>(r.tokens.size());
    sent_first = false;
    if (++current < streams.size()) return p;
    if (request.include_usage) p.text += openai_usage_event(head, prompt_tokens, completion_tokens);
    p.text += openai_done_event();
    p.last = true;
    return p;
  }
};

class OpenAIEventSource : public EventSource {
 public:
  explicit OpenAIEventSource(std::shared_ptr<OpenAICall> call) : call_(std::move(call)) {}
  EventPoll poll() override { return call_->poll_events(); }
  void set_ready_listener(std::function<void()> ready) override {
    for (const auto& s : call_->streams) s->set_listener(ready);
  }
  std::string cut_events(const std::string& why) override {
    return "data: " + openai_error_json(why, openai_error_type(503), "", "") + "\n\n" + openai_done_event();
  }

 private:
  std::shared_ptr<OpenAICall> call_;
};

// The failure that ended a choice, as the Error it was.
[[noreturn]] void rethrow(const TextEvent& e) {
  if (e.kind == TextEvent::kCancelled) throw Error(ErrorKind::kInterrupted, "the client went away");
  Error error(e.error_kind, e.error);
  if (!e.field.empty()) error.with("field", e.field);
  throw error;
}

// The request's choices queued on the model's engine: each its own job (a given seed is
// seed + the choice's index, so that choices differ and each is reproducible).
void submit_choices(OpenAICall& call) {
  TextEngine& engine = *call.model->text_engine();
  graphrt::GenerationConfig config;
  counting_refusal(*call.model, [&] {
    try {
      config = openai_generation_config(call.request, engine.defaults(), engine.vocab_size());
    } catch (Error& e) {
      if (call.request.endpoint == OpenAIEndpoint::kCompletions && e.context_value("field") == "top_logprobs")
        throw Error(e.kind(), e.message()).with("field", "logprobs");
      throw;
    }
  });
  call.logprobs = config.logprobs;
  for (int64_t i = 0; i < call.request.n; ++i) {
    TextJob job;
    job.chat = call.request.endpoint == OpenAIEndpoint::kChat;
    job.prompt = call.request.prompt;
    job.messages = call.request.messages;
    job.config = config;
    if (config.seed) job.config.seed = *config.seed + i;
    call.streams.push_back(engine.submit(std::move(job)));
  }
}

void answer_whole(httplib::Response& res, OpenAICall& call) {
  std::vector<OpenAIChoice> choices;
  for (auto& stream : call.streams) {
    for (;;) {
      TextEvent e = stream->next();
      if (e.kind == TextEvent::kPiece) continue;
      if (e.kind != TextEvent::kDone) rethrow(e);
      choices.push_back(OpenAIChoice{std::move(e.result), std::move(e.token_text)});
      break;
    }
  }
  res.status = 200;
  res.set_content(openai_response_json(call.head, choices, call.logprobs), kJson);
}


void completions(Repository& repository, const std::string& api_key, const CloseWatchFactory& watch_close,
                 OpenAIEndpoint endpoint, const httplib::Request& req, httplib::Response& res) {
  if (!api_key_accepts(api_key, req.get_header_value("Authorization")))
    return reply_openai_error(res, 401, "a valid API key is required: Authorization: Bearer <key>", "",
                              "invalid_api_key");
  try {
    auto call = std::make_shared<OpenAICall>();
    call->request = decode_openai_request(req.body, endpoint);
    call->model = find_text_model(repository, call->request.model);
    call->head = openai_response_head(endpoint, call->model->name());
    submit_choices(*call);
    // The streams, not the call: the watch may fire while the call goes.
    if (watch_close)
      call->watch = watch_close([streams = call->streams] {
        for (const auto& s : streams) s->cancel();
      });
    if (call->request.stream)
      return start_event_stream(req, res, std::make_unique<OpenAIEventSource>(std::move(call)));
    answer_whole(res, *call);
  } catch (const Error& e) {
    reply_error(res, e);
  } catch (const std::bad_alloc&) {
    reply_openai_error(res, 429, "out of memory handling the request", "");
  } catch (const std::exception& e) {
    reply_openai_error(res, 500, std::string("internal error: ") + e.what(), "");
  }
}

}  // namespace

void add_openai_routes(httplib::Server& server, Repository* repository, std::string api_key,
                       CloseWatchFactory watch_close) {
  server.Get("/v1/models", [repository, api_key](const httplib::Request& req, httplib::Response& res) {
    if (!api_key_accepts(api_key, req.get_header_value("Authorization")))
      return reply_openai_error(res, 401, "a valid API key is required: Authorization: Bearer <key>", "",
                                "invalid_api_key");
    res.status = 200;
    res.set_content(openai_models_json(text_model_names(*repository)), kJson);
  });
  const auto route = [&](const char* path, OpenAIEndpoint endpoint) {
    server.Post(path, [repository, api_key, watch_close, endpoint](const httplib::Request& req, httplib::Response& res) {
      completions(*repository, api_key, watch_close, endpoint, req, res);
    });
    server.Get(path, [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", "POST");
      reply_openai_error(res, 405, req.method + " " + req.path + ": this endpoint takes POST", "");
    });
  };
  route("/v1/completions", OpenAIEndpoint::kCompletions);
  route("/v1/chat/completions", OpenAIEndpoint::kChat);
}

}  // namespace graphrt_serve
