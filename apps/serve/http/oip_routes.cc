#include "http/oip_routes.h"

#include <httplib.h>

#include <chrono>
#include <vector>

#include "graphrt/error.h"
#include "http/connection_reactor.h"
#include "http/oip_reply.h"
#include "http/text_generate_route.h"
#include "http/token_generate_route.h"
#include "protocol/infer_request.h"
#include "protocol/infer_response.h"
#include "status.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

std::string tensor_metadata_json(const std::vector<TensorMetadata>& tensors) {
  std::string out = "[";
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorMetadata& t = tensors[i];
    if (i) out += ",";
    // An unknown type or shape (Relax parameters without config.json) is reported as such.
    out += "{\"name\":" + json_string(t.name) + ",\"datatype\":\"" +
           (t.known_type ? datatype_name(t.datatype) : "") + "\",\"shape\":[";
    if (t.known_shape)
      for (size_t d = 0; d < t.shape.size(); ++d) out += (d ? "," : "") + std::to_string(t.shape[d]);
    else
      out += "-1";
    out += "]}";
  }
  return out + "]";
}

}  // namespace

struct OipRoutes::Impl {
  Repository* repository = nullptr;
  ServerInfo info;
  size_t max_request_bytes = 0;
  CloseWatchFactory watch_close;

  void infer(const httplib::Request& req, httplib::Response& res) {
    const Clock::time_point start = Clock::now();
    std::shared_ptr<ServedModel> model;
    try {
      model = repository->find(match(req, 1), match(req, 2));
    } catch (const Error& e) {
      reply_error(res, e);
      return;
    }
    ModelMetrics& metrics = model->metrics();
    InferTimings timings;
    bool ok = false;
    guarded(res, [&] {
      try {
        const std::string* header = nullptr;
        std::string header_value;
        if (req.has_header("Inference-Header-Content-Length")) {
          header_value = req.get_header_value("Inference-Header-Content-Length");
          header = &header_value;
        }
        const InferRequest request = decode_rest_request(req.body.data(), req.body.size(), header);
        InferResult result = model->infer(request, &timings);  // holds the instance until encoded
        InferResponse response;
        response.outputs = std::move(result.outputs);
        response.model_name = model->name();
        response.model_version = model->version();
        response.has_id = request.has_id;
        response.id = request.id;
        size_t json_size = 0;
        std::string body = encode_rest_response(response, request, &json_size);
        res.status = 200;
        if (json_size != body.size()) {
          res.set_header("Inference-Header-Content-Length", std::to_string(json_size));
          res.set_content(std::move(body), "application/octet-stream");
        } else {
          res.set_content(std::move(body), kJsonType);
        }
        ok = true;
      } catch (Error& e) {
        throw e.with("model", model->name());
      }
    });
    record_request(metrics, ok, timings, ns_since(start));
  }

  // POST .../generate and .../generate_stream: the request goes to the model's engine
  // (generation/); the routes only decode, wait for tokens and write them.
  void generate(const httplib::Request& req, httplib::Response& res, bool stream) {
    guarded(res, [&] {
      const auto model = repository->find(match(req, 1), match(req, 2));
      try {
        if (model->text_engine()) return text_generate(req, res, model, stream, watch_close);
        token_generate(req, res, model, stream, watch_close);
      } catch (Error& e) {
        throw e.with("model", model->name());
      }
    });
  }

  void model_metadata(const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] {
      const auto model = repository->find(match(req, 1), match(req, 2));
      std::string versions = "[";
      for (const std::string& v : repository->versions(model->name()))
        versions += (versions.size() > 1 ? "," : "") + json_string(v);
      reply_json(res, 200,
                 "{\"name\":" + json_string(model->name()) + ",\"versions\":" + versions + "],\"platform\":\"" +
                     model->platform() + "\",\"inputs\":" + tensor_metadata_json(model->inputs()) +
                     ",\"outputs\":" + tensor_metadata_json(model->outputs()) + "}");
    });
  }

  void model_ready(const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] {
      const std::string name = match(req, 1);
      try {
        repository->find(name, match(req, 2));
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kNotFound) throw;
        reply_json(res, 503, "{\"name\":" + json_string(name) + ",\"ready\":false}");
        return;
      }
      reply_json(res, 200, "{\"name\":" + json_string(name) + ",\"ready\":true}");
    });
  }

  void add(httplib::Server& server) {
        server.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) {
      reply_json(res, 200, "{\"live\":true}");
    });
    server.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
      const bool ready = repository->all_ready();
      reply_json(res, ready ? 200 : 503, ready ? "{\"ready\":true}" : "{\"ready\":false}");
    });
    server.Get("/v2", [this](const httplib::Request&, httplib::Response& res) {
      std::string extensions;
      for (const std::string& e : info.extensions) extensions += (extensions.empty() ? "" : ",") + json_string(e);
      reply_json(res, 200, "{\"name\":" + json_string(info.name) + ",\"version\":" + json_string(info.version) +
                               ",\"extensions\":[" + extensions + "]}");
    });
    const std::string model = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
    server.Get(model, [this](const httplib::Request& req, httplib::Response& res) { model_metadata(req, res); });
    server.Get(model + "/ready",
               [this](const httplib::Request& req, httplib::Response& res) { model_ready(req, res); });
    server.Post(model + "/infer", [this](const httplib::Request& req, httplib::Response& res) { infer(req, res); });
    server.Post(model + "/generate",
                [this](const httplib::Request& req, httplib::Response& res) { generate(req, res, false); });
    server.Post(model + "/generate_stream",
                [this](const httplib::Request& req, httplib::Response& res) { generate(req, res, true); });
    // A route that exists for another verb: 405 with the verb it takes (RFC 9110 15.5.6).
    const auto post_only = [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", "POST");
      reply_json(res, 405, error_json(req.method + " " + req.path + ": this endpoint takes POST"));
    };
    server.Get(model + "/infer", post_only);
    server.Get(model + "/generate", post_only);
    server.Get(model + "/generate_stream", post_only);
    server.Get("/v2/repository/index", post_only);
    server.Get(R"(/v2/repository/models/([^/]+)/(load|unload))", post_only);
    server.Post("/v2/repository/index", [this](const httplib::Request& req, httplib::Response& res) {
      guarded(res, [&] {
        const bool ready_only = decode_index_request(req.body);
        std::string out = "[";
        for (const IndexEntry& e : repository->index(ready_only)) {
          if (out.size() > 1) out += ",";
          out += "{\"name\":" + json_string(e.name);
          if (!e.version.empty()) out += ",\"version\":" + json_string(e.version);
          out += ",\"state\":" + json_string(e.state) + ",\"reason\":" + json_string(e.reason) + "}";
        }
        reply_json(res, 200, out + "]");
      });
    });
    server.Post(R"(/v2/repository/models/([^/]+)/(load|unload))",
                [this](const httplib::Request& req, httplib::Response& res) {
                  guarded(res, [&] {
                    const std::string name = match(req, 1);
                    const std::string refusal = repository->control_refusal(match(req, 2) == "load" ? "load" : "unload");
                    if (!refusal.empty()) {
                      reply_json(res, 403, error_json(refusal + " [model: " + name + "]"));
                      return;
                    }
                    if (match(req, 2) == "load") {
                      check_load_request(req.body);
                      repository->load(name);
                    } else {
                      repository->unload(name);
                    }
                    reply_json(res, 200, "{}");
                  });
                });
    // A compressed body is refused before the library inflates it: inflating first would let
    // a small request (a gzip bomb) become gigabytes, past --max-request-bytes.
    // Chunked bodies are refused too: cpp-httplib 0.11 does not hold them to the body limit.
    server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      const std::string encoding = req.get_header_value("Content-Encoding");
      const bool compressed = !encoding.empty() && encoding != "identity";
      const bool chunked = req.has_header("Transfer-Encoding");
      if (!compressed && !chunked) return httplib::Server::HandlerResponse::Unhandled;
      close_after_response();
      res.set_header("Connection", "close");
      if (compressed)
        reply_json(res, 415, error_json("Content-Encoding '" + encoding + "' is not accepted: send the body as is"));
      else
        reply_json(res, 411, error_json("Transfer-Encoding '" + req.get_header_value("Transfer-Encoding") +
                                        "' is not accepted: send Content-Length"));
      return httplib::Server::HandlerResponse::Handled;
    });
    // Errors the library raised itself (our handlers always answer with a body): the request's
    // framing is in doubt (a body over the limit, a broken chunked body, a bad request line),
    // so the connection closes after the answer, except for an unknown route.
    server.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status != 404) {
        close_after_response();
        res.set_header("Connection", "close");
      }
      if (res.status == 413)
        res.set_content(error_json("request body larger than --max-request-bytes (" +
                                   std::to_string(max_request_bytes) + ")"),
                        kJsonType);
      else if (res.status == 404)
        res.set_content(error_json("no endpoint " + req.method + " " + req.path), kJsonType);
      else if (res.status == 400)
        res.set_content(error_json("malformed HTTP request, or a chunked body that is malformed or larger than "
                                   "--max-request-bytes (" + std::to_string(max_request_bytes) + ")"),
                        kJsonType);
      else
        res.set_content(error_json("HTTP error " + std::to_string(res.status)), kJsonType);
    });
  }
};

OipRoutes::OipRoutes(Repository* repository, const ServerInfo& info, size_t max_request_bytes,
                     CloseWatchFactory watch_close)
    : impl_(std::make_unique<Impl>()) {
  impl_->repository = repository;
  impl_->info = info;
  impl_->max_request_bytes = max_request_bytes;
  impl_->watch_close = std::move(watch_close);
}

OipRoutes::~OipRoutes() = default;

void OipRoutes::add_to(httplib::Server& server) { impl_->add(server); }

}  // namespace graphrt_serve
