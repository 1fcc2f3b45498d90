#include "grpc/inference_methods.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/error.h"
#include "protocol/grpc_codec.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

// An inference whose runs take less than this on average runs on the queue's thread (when an
// instance is free): it saves the hand-off to a pool thread and holds other connections'
// calls back by at most that long.
constexpr std::chrono::nanoseconds kInlineRunLimit = std::chrono::microseconds(500);

// The gRPC status of graphrt's error kinds (the REST table is status.h's).
grpc::StatusCode grpc_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: case ErrorKind::kTypeMismatch: case ErrorKind::kOutOfRange:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorKind::kUnsupported: return grpc::StatusCode::UNIMPLEMENTED;
    case ErrorKind::kNotFound: return grpc::StatusCode::NOT_FOUND;
    case ErrorKind::kResourceExhausted: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorKind::kFailedPrecondition: return grpc::StatusCode::UNAVAILABLE;
    case ErrorKind::kInterrupted: return grpc::StatusCode::DEADLINE_EXCEEDED;
    case ErrorKind::kDevice: case ErrorKind::kInternal: break;
  }
  return grpc::StatusCode::INTERNAL;
}

template <typename F>
grpc::Status guarded(F&& body) {
  try {
    body();
    return grpc::Status::OK;
  } catch (const Error& e) {
    return grpc::Status(grpc_code(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "out of memory handling the request");
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what());
  }
}

// The metadata response's tensors (a tensor of unknown shape: [-1]).
template <typename List>
void tensor_metadata(const std::vector<TensorMetadata>& tensors, List* out) {
  for (const TensorMetadata& t : tensors) {
    auto* m = out->Add();
    m->set_name(t.name);
    m->set_datatype(t.known_type ? datatype_name(t.datatype) : "");
    if (t.known_shape)
      for (int64_t d : t.shape) m->add_shape(d);
    else
      m->add_shape(-1);
  }
}

}  // namespace

InferenceMethods::InferenceMethods(Repository* repository, ServerInfo info)
    : repository_(repository), info_(std::move(info)) {}

grpc::Status InferenceMethods::server_live(const inference::ServerLiveRequest&, inference::ServerLiveResponse* out) {
  out->set_live(true);
  return grpc::Status::OK;
}

grpc::Status InferenceMethods::server_ready(const inference::ServerReadyRequest&, inference::ServerReadyResponse* out) {
  out->set_ready(repository_->all_ready());
  return grpc::Status::OK;
}

grpc::Status InferenceMethods::model_ready(const inference::ModelReadyRequest& in, inference::ModelReadyResponse* out) {
  return guarded([&] {
    try {
      repository_->find(in.name(), in.version());
      out->set_ready(true);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kNotFound) throw;
      out->set_ready(false);
    }
  });
}

grpc::Status InferenceMethods::server_metadata(const inference::ServerMetadataRequest&,
                                               inference::ServerMetadataResponse* out) {
  out->set_name(info_.name);
  out->set_version(info_.version);
  // As Triton does, the extensions are listed over gRPC too (the repository one is REST's).
  for (const std::string& e : info_.extensions) out->add_extensions(e);
  return grpc::Status::OK;
}

grpc::Status InferenceMethods::model_metadata(const inference::ModelMetadataRequest& in,
                                              inference::ModelMetadataResponse* out) {
  return guarded([&] {
    const auto model = repository_->find(in.name(), in.version());
    out->set_name(model->name());
    for (const std::string& v : repository_->versions(model->name())) out->add_versions(v);
    out->set_platform(model->platform());
    tensor_metadata(model->inputs(), out->mutable_inputs());
    tensor_metadata(model->outputs(), out->mutable_outputs());
  });
}

bool InferenceMethods::infer_runs_at_once(const inference::ModelInferRequest& in) {
  try {
    return repository_->find(in.model_name(), in.model_version())->runs_at_once(kInlineRunLimit);
  } catch (const Error&) {
    return true;
  }
}

grpc::Status InferenceMethods::model_infer(const inference::ModelInferRequest& in, inference::ModelInferResponse* out) {
  const Clock::time_point start = Clock::now();
  std::shared_ptr<ServedModel> model;
  grpc::Status status = guarded([&] { model = repository_->find(in.model_name(), in.model_version()); });
  if (!status.ok()) return status;
  InferTimings timings;
  status = guarded([&] {
    try {
      const InferRequest request = decode_grpc_request(in);
      InferResult result = model->infer(request, &timings);  // holds the instance until encoded
      out->set_model_name(model->name());
      out->set_model_version(model->version());
      out->set_id(in.id());
      for (OutputTensor& t : result.outputs) {
        auto* o = out->add_outputs();
        o->set_name(t.name);
        o->set_datatype(datatype_name(t.datatype));
        for (int64_t d : t.shape) o->add_shape(d);
        if (t.view)
          out->add_raw_output_contents(t.view, t.view_size);
        else
          out->add_raw_output_contents(std::move(t.owned));
      }
    } catch (Error& e) {
      throw e.with("model", model->name());
    }
  });
  record_request(model->metrics(), status.ok(), timings, ns_since(start));
  return status;
}

}  // namespace graphrt_serve
