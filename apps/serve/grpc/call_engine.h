// The gRPC front end's call engine, apart from what any method answers: completion
// queue tags (CallStep), the pool of threads for calls that may block, and one unary
// method's calls (UnaryCall: waits for a call, serves it inline or in the pool, answers).
#pragma once

#include <google/protobuf/arena.h>
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace graphrt_serve {

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
  explicit BlockingPool(int threads);
  ~BlockingPool();  // runs the jobs posted, then joins
  void post(std::function<void()> job);

 private:
  void work();
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

}  // namespace graphrt_serve
