#include "grpc/health_service.h"

#include "grpc/call_engine.h"

namespace graphrt_serve {

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

grpc::Status HealthState::check(const grpc::health::v1::HealthCheckRequest& request, HealthResponse* out) const {
  const HealthResponse::ServingStatus now = status(request.service());
  if (now == HealthResponse::SERVICE_UNKNOWN)
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service '" + request.service() + "'");
  out->set_status(now);
  return grpc::Status::OK;
}

void HealthState::wait_for_watch(HealthService* service, grpc::ServerCompletionQueue* queue) {
  HealthWatch::wait_for_call(service, queue, this);
}

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

}  // namespace graphrt_serve
