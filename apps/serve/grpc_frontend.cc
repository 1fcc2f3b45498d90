#include "grpc_frontend.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

#include "graphrt/error.h"
#include "graphrt/float16.h"
#include "grpc_codec.h"
#include "grpc_service.grpc.pb.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

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

class InferenceService final : public inference::GRPCInferenceService::Service {
 public:
  InferenceService(Repository* repository, ServerInfo info) : repository_(repository), info_(std::move(info)) {}

  grpc::Status ServerLive(grpc::ServerContext*, const inference::ServerLiveRequest*,
                          inference::ServerLiveResponse* out) override {
    out->set_live(true);
    return grpc::Status::OK;
  }

  grpc::Status ServerReady(grpc::ServerContext*, const inference::ServerReadyRequest*,
                           inference::ServerReadyResponse* out) override {
    out->set_ready(repository_->all_ready());
    return grpc::Status::OK;
  }

  grpc::Status ModelReady(grpc::ServerContext*, const inference::ModelReadyRequest* in,
                          inference::ModelReadyResponse* out) override {
    return guarded([&] {
      try {
        repository_->find(in->name(), in->version());
        out->set_ready(true);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kNotFound) throw;
        out->set_ready(false);
      }
    });
  }

  grpc::Status ServerMetadata(grpc::ServerContext*, const inference::ServerMetadataRequest*,
                              inference::ServerMetadataResponse* out) override {
    out->set_name(info_.name);
    out->set_version(info_.version);
    // The extensions are REST ones; over gRPC the server is the protocol's core.
    return grpc::Status::OK;
  }

  grpc::Status ModelMetadata(grpc::ServerContext*, const inference::ModelMetadataRequest* in,
                             inference::ModelMetadataResponse* out) override {
    return guarded([&] {
      const auto model = repository_->find(in->name(), in->version());
      out->set_name(model->name());
      for (const std::string& v : repository_->versions(model->name())) out->add_versions(v);
      out->set_platform(model->platform());
      tensor_metadata(model->inputs(), out->mutable_inputs());
      tensor_metadata(model->outputs(), out->mutable_outputs());
    });
  }

  grpc::Status ModelInfer(grpc::ServerContext*, const inference::ModelInferRequest* in,
                          inference::ModelInferResponse* out) override {
    const Clock::time_point start = Clock::now();
    std::shared_ptr<ServedModel> model;
    grpc::Status status = guarded([&] { model = repository_->find(in->model_name(), in->model_version()); });
    if (!status.ok()) return status;
    InferTimings timings;
    status = guarded([&] {
      try {
        const InferRequest request = decode_grpc_request(*in);
        std::vector<OutputTensor> outputs = model->infer(request, &timings);
        out->set_model_name(model->name());
        out->set_model_version(model->version());
        out->set_id(in->id());
        for (OutputTensor& t : outputs) {
          auto* o = out->add_outputs();
          o->set_name(t.name);
          o->set_datatype(datatype_name(t.datatype));
          for (int64_t d : t.shape) o->add_shape(d);
          out->add_raw_output_contents(std::move(t.data));
        }
      } catch (Error& e) {
        throw e.with("model", model->name());
      }
    });
    record_request(model->metrics(), status.ok(), timings,
                   std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    return status;
  }

 private:
  Repository* repository_;
  ServerInfo info_;
};

}  // namespace

struct GrpcFrontend::Impl {
  Repository* repository = nullptr;
  GrpcOptions options;
  std::unique_ptr<InferenceService> service;
  std::unique_ptr<grpc::Server> server;
  // Keeps grpc.health.v1 in step with readiness (models load and unload over REST too).
  std::thread health_thread;
  std::mutex mutex;
  std::condition_variable stop_requested;
  bool stopping = false;

  void track_health() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      const bool ready = repository->all_ready();
      server->GetHealthCheckService()->SetServingStatus(ready);
      server->GetHealthCheckService()->SetServingStatus("inference.GRPCInferenceService", ready);
      stop_requested.wait_for(lock, std::chrono::milliseconds(200));
    }
  }
};

GrpcFrontend::GrpcFrontend(Repository* repository, const ServerInfo& info, const GrpcOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->repository = repository;
  impl_->options = options;
  impl_->service = std::make_unique<InferenceService>(repository, info);
}

GrpcFrontend::~GrpcFrontend() { stop(); }

int GrpcFrontend::start() {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int bound = 0;
  const std::string address = impl_->options.host + ":" + std::to_string(impl_->options.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(impl_->service.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(
      std::min<size_t>(impl_->options.max_request_bytes, static_cast<size_t>(std::numeric_limits<int>::max()))));
  builder.SetMaxSendMessageSize(-1);
  grpc::ResourceQuota quota("graphrt-serve");
  quota.SetMaxThreads(impl_->options.threads);
  builder.SetResourceQuota(quota);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || bound == 0)
    throw Error(ErrorKind::kResourceExhausted, "cannot bind the gRPC port " + std::to_string(impl_->options.port) +
                                                   " (in use?)")
        .with("host", impl_->options.host);
  impl_->health_thread = std::thread([this] { impl_->track_health(); });
  return bound;
}

void GrpcFrontend::stop() {
  if (!impl_->server) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->stop_requested.notify_all();
  impl_->health_thread.join();
  impl_->server->GetHealthCheckService()->SetServingStatus(false);
  // RPCs in flight get up to 30 s to finish; new ones are refused at once.
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(30));
  impl_->server->Wait();
}

}  // namespace graphrt_serve
