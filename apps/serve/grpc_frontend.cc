#include "grpc_frontend.h"

#include <google/protobuf/arena.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/float16.h"
#include "grpc_codec.h"
#include "grpc_service.grpc.pb.h"
#include "health.grpc.pb.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

// The threads that poll the completion queue: one. gRPC hands the polling of the sockets
// from thread to thread among those waiting on a queue, a wake-up of another thread on every
// call, and with several of them a call's bytes may be read on one thread and served on
// another (measured in docs/serving.md). One thread reads each call, serves it when it is
// short and answers it; what may block goes to the blocking pool.
constexpr int kQueueThreads = 1;
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

// What each method answers, apart from how calls reach it.
class InferenceMethods {
 public:
  InferenceMethods(Repository* repository, ServerInfo info) : repository_(repository), info_(std::move(info)) {}

  grpc::Status server_live(const inference::ServerLiveRequest&, inference::ServerLiveResponse* out) {
    out->set_live(true);
    return grpc::Status::OK;
  }

  grpc::Status server_ready(const inference::ServerReadyRequest&, inference::ServerReadyResponse* out) {
    out->set_ready(repository_->all_ready());
    return grpc::Status::OK;
  }

  grpc::Status model_ready(const inference::ModelReadyRequest& in, inference::ModelReadyResponse* out) {
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

  grpc::Status server_metadata(const inference::ServerMetadataRequest&, inference::ServerMetadataResponse* out) {
    out->set_name(info_.name);
    out->set_version(info_.version);
    // As Triton does, the extensions are listed over gRPC too (the repository one is REST's).
    for (const std::string& e : info_.extensions) out->add_extensions(e);
    return grpc::Status::OK;
  }

  grpc::Status model_metadata(const inference::ModelMetadataRequest& in, inference::ModelMetadataResponse* out) {
    return guarded([&] {
      const auto model = repository_->find(in.name(), in.version());
      out->set_name(model->name());
      for (const std::string& v : repository_->versions(model->name())) out->add_versions(v);
      out->set_platform(model->platform());
      tensor_metadata(model->inputs(), out->mutable_inputs());
      tensor_metadata(model->outputs(), out->mutable_outputs());
    });
  }

  // Whether the inference can run on the I/O thread: it most likely returns at once (the
  // answer to an unknown model is at once too).
  bool infer_runs_at_once(const inference::ModelInferRequest& in) {
    try {
      return repository_->find(in.model_name(), in.model_version())->runs_at_once(kInlineRunLimit);
    } catch (const Error&) {
      return true;
    }
  }

  grpc::Status model_infer(const inference::ModelInferRequest& in, inference::ModelInferResponse* out) {
    const Clock::time_point start = Clock::now();
    std::shared_ptr<ServedModel> model;
    grpc::Status status = guarded([&] { model = repository_->find(in.model_name(), in.model_version()); });
    if (!status.ok()) return status;
    InferTimings timings;
    status = guarded([&] {
      try {
        const InferRequest request = decode_grpc_request(in);
        std::vector<OutputTensor> outputs = model->infer(request, &timings);
        out->set_model_name(model->name());
        out->set_model_version(model->version());
        out->set_id(in.id());
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
    record_request(model->metrics(), status.ok(), timings, ns_since(start));
    return status;
  }

 private:
  Repository* repository_;
  ServerInfo info_;
};

// A completion queue tag: the next step of one call.
class CallStep {
 public:
  virtual ~CallStep() = default;
  // `ok` false: the call ended early (client gone) or the server is shutting down.
  virtual void proceed(bool ok) = 0;
};

// Threads for the calls that may block (an inference that waits for an instance or for a
// batch, or runs long): `threads` of them, so that many calls wait or run at once.
class BlockingPool {
 public:
  explicit BlockingPool(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~BlockingPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void post(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    ready_.notify_one();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// One unary method: how a call of it is asked for, what serves it, and whether a call may be
// served on the queue's thread (else it goes to the blocking pool).
template <typename Request, typename Response>
struct UnaryMethod {
  using Writer = grpc::ServerAsyncResponseWriter<Response>;
  std::function<void(grpc::ServerContext*, Request*, Writer*, void*)> ask;
  std::function<grpc::Status(const Request&, Response*)> serve;
  std::function<bool(const Request&)> runs_at_once;  // empty: always
  BlockingPool* pool;
};

// One call of a unary method. It waits for the call, has the next call of its method waited
// for, serves it (on the thread that read it, or in the blocking pool), answers, and is
// deleted once the answer is sent. Request and response live in the call's arena, whose
// first block is part of the object: a small call's messages and strings cost no other
// allocation.
template <typename Request, typename Response>
class UnaryCall final : public CallStep {
 public:
  using Method = UnaryMethod<Request, Response>;

  static void wait_for_call(const Method* method) {
    auto* call = new UnaryCall(method);
    method->ask(&call->context_, call->request_, &call->writer_, call);
  }

  void proceed(bool ok) override {
    if (ok && !answering_) {
      // While this call holds its context the server cannot finish shutting down, so the
      // queue is still open for the next call's tag (failed at once when shutting down).
      wait_for_call(method_);
      answering_ = true;
      if (!method_->runs_at_once || method_->runs_at_once(*request_))
        answer();
      else
        method_->pool->post([this] { answer(); });
      return;
    }
    delete this;  // answered, ended early, or never came (shutdown)
  }

 private:
  explicit UnaryCall(const Method* method)
      : method_(method),
        arena_(arena_options(block_, sizeof(block_))),
        request_(google::protobuf::Arena::CreateMessage<Request>(&arena_)),
        response_(google::protobuf::Arena::CreateMessage<Response>(&arena_)),
        writer_(&context_) {}

  static google::protobuf::ArenaOptions arena_options(char* block, size_t size) {
    google::protobuf::ArenaOptions options;
    options.initial_block = block;
    options.initial_block_size = size;
    return options;
  }

  void answer() {
    const grpc::Status status = method_->serve(*request_, response_);
    writer_.Finish(*response_, status, this);
  }

  const Method* method_;
  bool answering_ = false;
  alignas(16) char block_[4096];  // the arena's first block
  google::protobuf::Arena arena_;
  Request* request_;
  Response* response_;
  grpc::ServerContext context_;
  grpc::ServerAsyncResponseWriter<Response> writer_;
};

using HealthResponse = grpc::health::v1::HealthCheckResponse;
using HealthService = grpc::health::v1::Health::AsyncService;

class HealthWatch;

// grpc.health.v1's state: one status for the server ("") and the inference service (ready:
// every model loaded), and the Watch calls open on it.
class HealthState {
 public:
  // The status of `service` now; SERVICE_UNKNOWN for one the server does not serve.
  HealthResponse::ServingStatus status(const std::string& service) const {
    if (!service.empty() && service != "inference.GRPCInferenceService") return HealthResponse::SERVICE_UNKNOWN;
    return serving_.load() ? HealthResponse::SERVING : HealthResponse::NOT_SERVING;
  }
  void set_serving(bool serving);
  // Registers an open Watch call; false once the watches are ended (shutdown).
  bool add(HealthWatch* watch);
  void remove(HealthWatch* watch);
  // Ends every Watch call (after its last status is sent); later ones end at once.
  void end_watches();

 private:
  std::atomic<bool> serving_{false};
  std::mutex mutex_;
  std::set<HealthWatch*> watches_;
  bool ended_ = false;
};

// One Watch call of grpc.health.v1: sends the status, then each change of it, one write at a
// time, until the client leaves or the server shuts down. Its steps are four tags; it is
// deleted when the call is done and no write or finish is pending.
class HealthWatch {
 public:
  static void wait_for_call(HealthService* service, grpc::ServerCompletionQueue* queue, HealthState* state) {
    auto* watch = new HealthWatch(service, queue, state);
    watch->context_.AsyncNotifyWhenDone(&watch->done_);
    service->RequestWatch(&watch->context_, &watch->request_, &watch->writer_, queue, queue, &watch->arrived_);
  }

  // The status may have changed: sends it unless a write is pending (its end sends it).
  void status_changed() {
    std::lock_guard<std::mutex> lock(mutex_);
    send_locked();
  }

  void end() {
    std::lock_guard<std::mutex> lock(mutex_);
    end_requested_ = true;
    send_locked();
  }

 private:
  struct Step final : CallStep {
    Step(HealthWatch* w, void (HealthWatch::*f)(bool)) : watch(w), on(f) {}
    void proceed(bool ok) override { (watch->*on)(ok); }
    HealthWatch* watch;
    void (HealthWatch::*on)(bool);
  };

  HealthWatch(HealthService* service, grpc::ServerCompletionQueue* queue, HealthState* state)
      : service_(service), queue_(queue), state_(state), writer_(&context_) {}

  void on_arrived(bool ok) {
    if (!ok) {
      delete this;  // never came (shutdown): the done tag never comes either
      return;
    }
    wait_for_call(service_, queue_, state_);
    const bool added = state_->add(this);  // before taking mutex_: the state's lock comes first
    std::lock_guard<std::mutex> lock(mutex_);
    started_ = true;
    registered_ = added;
    end_requested_ = end_requested_ || !added;
    send_locked();
  }

  void on_written(bool ok) {
    std::unique_lock<std::mutex> lock(mutex_);
    writing_ = false;
    if (!ok) broken_ = true;
    send_locked();
    finish_if_done(lock);
  }

  void on_finished(bool) {
    std::unique_lock<std::mutex> lock(mutex_);
    finishing_ = false;
    finish_if_done(lock);
  }

  void on_done(bool) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_seen_ = true;
    finish_if_done(lock);
  }

  // Starts the next write or the finish, when none is pending.
  void send_locked() {
    if (!started_ || writing_ || finishing_ || finished_ || broken_ || done_seen_) return;
    const HealthResponse::ServingStatus now = state_->status(request_.service());
    if (!sent_any_ || now != last_sent_) {
      sent_any_ = true;
      last_sent_ = now;
      response_.set_status(now);
      writing_ = true;
      writer_.Write(response_, &written_);
    } else if (end_requested_) {
      finished_ = finishing_ = true;
      writer_.Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"), &finished_step_);
    }
  }

  // Deletes this once the call is done and no tag of it is pending.
  void finish_if_done(std::unique_lock<std::mutex>& lock) {
    if (!done_seen_ || writing_ || finishing_) return;
    lock.unlock();
    if (registered_) state_->remove(this);
    delete this;
  }

  HealthService* service_;
  grpc::ServerCompletionQueue* queue_;
  HealthState* state_;
  grpc::ServerContext context_;
  grpc::health::v1::HealthCheckRequest request_;
  HealthResponse response_;
  grpc::ServerAsyncWriter<HealthResponse> writer_;
  Step arrived_{this, &HealthWatch::on_arrived};
  Step written_{this, &HealthWatch::on_written};
  Step finished_step_{this, &HealthWatch::on_finished};
  Step done_{this, &HealthWatch::on_done};
  std::mutex mutex_;
  bool started_ = false, registered_ = false, writing_ = false, finishing_ = false, finished_ = false;
  bool broken_ = false, done_seen_ = false, end_requested_ = false, sent_any_ = false;
  HealthResponse::ServingStatus last_sent_ = HealthResponse::UNKNOWN;
};

void HealthState::set_serving(bool serving) {
  if (serving_.exchange(serving) == serving) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (HealthWatch* w : watches_) w->status_changed();
}

bool HealthState::add(HealthWatch* watch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ended_) return false;
  watches_.insert(watch);
  return true;
}

void HealthState::remove(HealthWatch* watch) {
  std::lock_guard<std::mutex> lock(mutex_);
  watches_.erase(watch);
}

void HealthState::end_watches() {
  std::lock_guard<std::mutex> lock(mutex_);
  ended_ = true;
  for (HealthWatch* w : watches_) w->end();
}

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
      const HealthResponse::ServingStatus status = health->status(r.service());
      if (status == HealthResponse::SERVICE_UNKNOWN)
        return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service '" + r.service() + "'");
      out->set_status(status);
      return grpc::Status::OK;
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
    HealthWatch::wait_for_call(health_service_, queue_, health_);
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
