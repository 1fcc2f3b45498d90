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
#include "grpc_service.grpc.pb.h"
#include "infer_request.h"

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

[[noreturn]] void fail(const std::string& tensor, const std::string& field, const std::string& message) {
  Error e(message);
  if (!tensor.empty()) e.with("tensor", tensor);
  throw e.with("field", field);
}

template <typename T>
void append(std::string* out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

// Typed contents of one datatype into tensor bytes; `Narrow` is the element type in memory,
// checked against its range.
template <typename Narrow, typename Field>
void narrow_into(const Field& values, const std::string& tensor, const char* field, std::string* out) {
  out->reserve(values.size() * sizeof(Narrow));
  for (auto v : values) {
    if (v < static_cast<decltype(v)>(std::numeric_limits<Narrow>::min()) ||
        v > static_cast<decltype(v)>(std::numeric_limits<Narrow>::max()))
      fail(tensor, field, "element " + std::to_string(v) + " is out of range");
    append(out, static_cast<Narrow>(v));
  }
}

int64_t contents_count(const inference::InferTensorContents& c) {
  return c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() + c.uint_contents_size() +
         c.uint64_contents_size() + c.fp32_contents_size() + c.fp64_contents_size() + c.bytes_contents_size();
}

// The typed contents of an input as tensor bytes.
void decode_contents(const inference::InferTensorContents& c, InputTensor* t) {
  const std::string& n = t->name;
  std::string* out = &t->decoded;
  int64_t used = 0;
  switch (t->datatype) {
    case Datatype::kBool:
      for (bool b : c.bool_contents()) out->push_back(b ? 1 : 0);
      used = c.bool_contents_size();
      break;
    case Datatype::kInt8: narrow_into<int8_t>(c.int_contents(), n, "contents.int_contents", out); used = c.int_contents_size(); break;
    case Datatype::kInt16: narrow_into<int16_t>(c.int_contents(), n, "contents.int_contents", out); used = c.int_contents_size(); break;
    case Datatype::kInt32: narrow_into<int32_t>(c.int_contents(), n, "contents.int_contents", out); used = c.int_contents_size(); break;
    case Datatype::kInt64: narrow_into<int64_t>(c.int64_contents(), n, "contents.int64_contents", out); used = c.int64_contents_size(); break;
    case Datatype::kUint8: narrow_into<uint8_t>(c.uint_contents(), n, "contents.uint_contents", out); used = c.uint_contents_size(); break;
    case Datatype::kUint16: narrow_into<uint16_t>(c.uint_contents(), n, "contents.uint_contents", out); used = c.uint_contents_size(); break;
    case Datatype::kUint32: narrow_into<uint32_t>(c.uint_contents(), n, "contents.uint_contents", out); used = c.uint_contents_size(); break;
    case Datatype::kUint64: narrow_into<uint64_t>(c.uint64_contents(), n, "contents.uint64_contents", out); used = c.uint64_contents_size(); break;
    case Datatype::kFp32:
      for (float v : c.fp32_contents()) append(out, v);
      used = c.fp32_contents_size();
      break;
    case Datatype::kFp64:
      for (double v : c.fp64_contents()) append(out, v);
      used = c.fp64_contents_size();
      break;
    case Datatype::kBytes:
      for (const std::string& s : c.bytes_contents()) {
        if (s.size() > std::numeric_limits<uint32_t>::max()) fail(n, "contents.bytes_contents", "element over 4 GiB");
        append(out, static_cast<uint32_t>(s.size()));
        out->append(s);
      }
      used = c.bytes_contents_size();
      break;
    case Datatype::kFp16: case Datatype::kBf16:
      if (contents_count(c) == 0) break;
      fail(n, "contents", std::string(datatype_name(t->datatype)) + " has no typed contents field: use raw_input_contents");
  }
  if (used != contents_count(c))
    fail(n, "contents", std::string("holds values in a field other than the one for ") + datatype_name(t->datatype));
}

InferRequest decode_grpc_request(const inference::ModelInferRequest& r) {
  InferRequest req;
  req.has_id = !r.id().empty();
  req.id = r.id();
  for (const auto& kv : r.parameters()) {
    if (kv.first == "timeout") {
      if (kv.second.parameter_choice_case() != inference::InferParameter::kInt64Param || kv.second.int64_param() < 0)
        fail("", "parameters", "parameter 'timeout' must be a non-negative int64_param (microseconds)");
      req.timeout_us = kv.second.int64_param();
    }
  }
  const bool raw = r.raw_input_contents_size() > 0;
  if (raw && r.raw_input_contents_size() != r.inputs_size())
    fail("", "raw_input_contents", std::to_string(r.raw_input_contents_size()) + " entries for " +
                                       std::to_string(r.inputs_size()) + " inputs");
  for (int i = 0; i < r.inputs_size(); ++i) {
    const auto& in = r.inputs(i);
    InputTensor t;
    t.name = in.name();
    for (const InputTensor& other : req.inputs)
      if (other.name == t.name) fail(t.name, "name", "input given twice");
    if (!datatype_from_name(in.datatype(), &t.datatype))
      fail(t.name, "datatype", "'" + in.datatype() + "' is not a protocol datatype");
    for (int64_t d : in.shape()) {
      if (d < 0) fail(t.name, "shape", "dimension " + std::to_string(d) + " is negative");
      t.shape.push_back(d);
    }
    if (in.parameters().count("shared_memory_region"))
      throw Error(ErrorKind::kUnsupported, "shared memory inputs are not supported")
          .with("tensor", t.name).with("field", "parameters");
    if (raw) {
      if (contents_count(in.contents()) != 0) fail(t.name, "contents", "given together with raw_input_contents");
      t.view = r.raw_input_contents(i).data();
      t.view_size = r.raw_input_contents(i).size();
    } else {
      decode_contents(in.contents(), &t);
    }
    check_tensor_bytes(t.name, t.datatype, t.shape, t.data(), t.size());
    req.inputs.push_back(std::move(t));
  }
  for (const auto& o : r.outputs()) {
    for (const RequestedOutput& other : req.outputs)
      if (other.name == o.name()) fail(o.name(), "outputs", "output requested twice");
    if (o.parameters().count("classification"))
      throw Error(ErrorKind::kUnsupported, "classification outputs are not supported")
          .with("tensor", o.name()).with("field", "parameters");
    req.outputs.push_back(RequestedOutput{o.name(), 1});
  }
  return req;
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
