// How the Open Inference Protocol's REST routes answer: a JSON body with its status, errors as
// {"error": "<one line>"} with the status of graphrt's error kind, and the guard that turns
// whatever a handler throws into such an answer.
#pragma once

#include <httplib.h>

#include <new>
#include <string>

#include "graphrt/error.h"
#include "protocol/infer_response.h"
#include "status.h"

namespace graphrt_serve {

inline const char* const kJsonType = "application/json";

inline void reply_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, kJsonType);
}

inline void reply_error(httplib::Response& res, const graphrt::Error& e) {
  reply_json(res, http_status(e.kind()), error_json(e.what()));
}

// The route's capture group i ("" when absent).
inline std::string match(const httplib::Request& req, size_t i) {
  return i < req.matches.size() ? std::string(req.matches[i]) : std::string();
}

// Runs a handler body, turning graphrt errors (and anything else) into the protocol's
// {"error": ...} with the kind's status.
template <typename F>
void guarded(httplib::Response& res, F&& body) {
  try {
    body();
  } catch (const graphrt::Error& e) {
    reply_error(res, e);
  } catch (const std::bad_alloc&) {
    reply_json(res, 429, error_json("out of memory handling the request"));
  } catch (const std::exception& e) {
    reply_json(res, 500, error_json(std::string("internal error: ") + e.what()));
  }
}

}  // namespace graphrt_serve
