// The protocol statuses of graphrt's error kinds, one table for every front end.
#pragma once

#include "graphrt/error.h"

namespace graphrt_serve {

// HTTP: 400 for what the request got wrong, 404 for an unknown model, version or route,
// 429 for a full queue, 503 for a model not ready or a request that timed out waiting,
// 500 for the server's own failures.
inline int http_status(graphrt::ErrorKind kind) {
  using graphrt::ErrorKind;
  switch (kind) {
    case ErrorKind::kInvalidArgument: case ErrorKind::kTypeMismatch: case ErrorKind::kOutOfRange:
    case ErrorKind::kUnsupported:
      return 400;
    case ErrorKind::kNotFound: return 404;
    case ErrorKind::kResourceExhausted: return 429;
    case ErrorKind::kFailedPrecondition: case ErrorKind::kInterrupted: return 503;
    case ErrorKind::kDevice: case ErrorKind::kInternal: break;
  }
  return 500;
}

}  // namespace graphrt_serve
