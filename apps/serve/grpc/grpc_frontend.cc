#include "grpc/grpc_frontend.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "graphrt/error.h"
#include "grpc/call_engine.h"
#include "grpc/health_service.h"
#include "grpc/inference_methods.h"
#include "grpc_service.grpc.pb.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

// The threads that poll the completion queue: one. gRPC hands the polling of the sockets
// from thread to thread among those waiting on a queue, a wake-up of another thread on every
// call, and with several of them a call's bytes may be read on one thread and served on
// another (measured in docs/serving.md). One thread reads each call, serves it when it is
// short and answers it; what may block goes to the blocking pool.
constexpr int kQueueThreads = 1;

// Every method of inference.GRPCInferenceService and grpc.health.v1, each with a call
// waiting for it on the queue.
class Calls {
 public:
  Calls(inference::GRPCInferenceService::AsyncService* s, HealthService* h, InferenceMethods* m,
        HealthState* health, grpc::ServerCompletionQueue* q, BlockingPool* pool)
      : health_service_(h), health_(health), queue_(q) {
    using Ns = inference::GRPCInferenceService::AsyncService;
    unary(&server_live_, s, &Ns::RequestServerLive, m, &InferenceMethods::server_live, pool);
    unary(&server_ready_, s, &Ns::RequestServerReady, m, &InferenceMethods::server_ready, pool);
    unary(&model_ready_, s, &Ns::RequestModelReady, m, &InferenceMethods::model_ready, pool);
    unary(&server_metadata_, s, &Ns::RequestServerMetadata, m, &InferenceMethods::server_metadata, pool);
    unary(&model_metadata_, s, &Ns::RequestModelMetadata, m, &InferenceMethods::model_metadata, pool);
    unary(&model_infer_, s, &Ns::RequestModelInfer, m, &InferenceMethods::model_infer, pool);
    model_infer_.runs_at_once = [m](const inference::ModelInferRequest& r) { return m->infer_runs_at_once(r); };
    health_check_.ask = [h, q](grpc::ServerContext* c, grpc::health::v1::HealthCheckRequest* r,
                               UnaryMethod<grpc::health::v1::HealthCheckRequest, HealthResponse>::Writer* w,
                               void* tag) { h->RequestCheck(c, r, w, q, q, tag); };
    health_check_.serve = [health](const grpc::health::v1::HealthCheckRequest& r, HealthResponse* out) {
      return health->check(r, out);
    };
    health_check_.pool = pool;
  }

  void wait_for_calls() {
    wait(&server_live_);
    wait(&server_ready_);
    wait(&model_ready_);
    wait(&server_metadata_);
    wait(&model_metadata_);
    wait(&model_infer_);
    wait(&health_check_);
    health_->wait_for_watch(health_service_, queue_);
  }

 private:
  template <typename Request, typename Response, typename Ask, typename Serve>
  void unary(UnaryMethod<Request, Response>* method, inference::GRPCInferenceService::AsyncService* s, Ask ask,
             InferenceMethods* m, Serve serve, BlockingPool* pool) {
    grpc::ServerCompletionQueue* q = queue_;
    method->ask = [s, ask, q](grpc::ServerContext* c, Request* r, grpc::ServerAsyncResponseWriter<Response>* w,
                              void* tag) { (s->*ask)(c, r, w, q, q, tag); };
    method->serve = [m, serve](const Request& r, Response* out) { return (m->*serve)(r, out); };
    method->pool = pool;
  }

  template <typename Request, typename Response>
  static void wait(const UnaryMethod<Request, Response>* method) {
    UnaryCall<Request, Response>::wait_for_call(method);
  }

  HealthService* health_service_;
  HealthState* health_;
  grpc::ServerCompletionQueue* queue_;
  UnaryMethod<inference::ServerLiveRequest, inference::ServerLiveResponse> server_live_;
  UnaryMethod<inference::ServerReadyRequest, inference::ServerReadyResponse> server_ready_;
  UnaryMethod<inference::ModelReadyRequest, inference::ModelReadyResponse> model_ready_;
  UnaryMethod<inference::ServerMetadataRequest, inference::ServerMetadataResponse> server_metadata_;
  UnaryMethod<inference::ModelMetadataRequest, inference::ModelMetadataResponse> model_metadata_;
  UnaryMethod<inference::ModelInferRequest, inference::ModelInferResponse> model_infer_;
  UnaryMethod<grpc::health::v1::HealthCheckRequest, HealthResponse> health_check_;
};

}  // namespace

struct GrpcFrontend::Impl {
  Repository* repository = nullptr;
  GrpcOptions options;
  std::unique_ptr<InferenceMethods> methods;
  inference::GRPCInferenceService::AsyncService service;
  HealthService health_service;
  HealthState health;
  // Declared before the server: the queue outlives it.
  std::unique_ptr<grpc::ServerCompletionQueue> queue;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<BlockingPool> pool;
  std::unique_ptr<Calls> calls;
  std::vector<std::thread> queue_threads;
  // Keeps grpc.health.v1 in step with readiness (models load and unload over REST too).
  std::thread health_thread;
  std::mutex mutex;
  std::condition_variable stop_requested;
  bool stopping = false;

  void track_health() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      health.set_serving(repository->all_ready());
      stop_requested.wait_for(lock, std::chrono::milliseconds(200));
    }
  }

  void serve_queue() {
    void* tag = nullptr;
    bool ok = false;
    while (queue->Next(&tag, &ok)) static_cast<CallStep*>(tag)->proceed(ok);
  }
};

GrpcFrontend::GrpcFrontend(Repository* repository, const ServerInfo& info, const GrpcOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->repository = repository;
  impl_->options = options;
  impl_->methods = std::make_unique<InferenceMethods>(repository, info);
}

GrpcFrontend::~GrpcFrontend() { stop(); }

int GrpcFrontend::start() {
  grpc::ServerBuilder builder;
  int bound = 0;
  const std::string address = impl_->options.host + ":" + std::to_string(impl_->options.port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound);
  // Exclusive port: gRPC sets SO_REUSEPORT by default, with which a second server on the port
  // binds too and takes some of the connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&impl_->service);
  builder.RegisterService(&impl_->health_service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(
      std::min<size_t>(impl_->options.max_request_bytes, static_cast<size_t>(std::numeric_limits<int>::max()))));
  builder.SetMaxSendMessageSize(-1);
  impl_->queue = builder.AddCompletionQueue();
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || bound == 0)
    throw Error(ErrorKind::kResourceExhausted, "cannot bind the gRPC port " + std::to_string(impl_->options.port) +
                                                   " (in use?)")
        .with("host", impl_->options.host);
  impl_->health.set_serving(impl_->repository->all_ready());
  impl_->pool = std::make_unique<BlockingPool>(std::max(1, impl_->options.threads));
  impl_->calls = std::make_unique<Calls>(&impl_->service, &impl_->health_service, impl_->methods.get(),
                                         &impl_->health, impl_->queue.get(), impl_->pool.get());
  impl_->calls->wait_for_calls();
  for (int i = 0; i < kQueueThreads; ++i) impl_->queue_threads.emplace_back([this] { impl_->serve_queue(); });
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
  if (impl_->health_thread.joinable()) impl_->health_thread.join();
  // Watchers see NOT_SERVING, then their calls end; RPCs in flight get up to 30 s to finish
  // (the queue's thread and the pool serve them meanwhile); new ones are refused at once.
  impl_->health.set_serving(false);
  impl_->health.end_watches();
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(30));
  impl_->queue->Shutdown();
  for (std::thread& t : impl_->queue_threads) t.join();
  impl_->pool.reset();
  impl_->server->Wait();
}

}  // namespace graphrt_serve
