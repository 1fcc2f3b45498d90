// A generate request that a route refuses before the model's engine has it (its body, its
// sampling fields) counts among the model's generate failures, as the engine's own refusals
// (a full queue, a prompt too long for the cache) do.
#pragma once

#include <atomic>

#include "graphrt/error.h"
#include "models/served_model.h"

namespace graphrt_serve {

template <typename F>
auto counting_refusal(const ServedModel& model, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const graphrt::Error&) {
    model.metrics().generate_failure.fetch_add(1, std::memory_order_relaxed);
    throw;
  }
}

}  // namespace graphrt_serve
