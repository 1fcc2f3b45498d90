// The one exception-to-error-code guard at every extern "C" boundary, for the
// core and for the layers above it that define C functions of their own.
#pragma once

#include <exception>
#include <string>

#include "graphrt/packed_func.h"

namespace graphrt {

// Runs `body`; returns 0, or -1 with the exception's message as last error.
template <typename F>
int c_api_guard(F&& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    set_last_error(e.what());
  } catch (...) {
    set_last_error("unknown C++ exception");
  }
  return -1;
}

// A string that stays valid until the calling thread's next call: how C
// functions hand out strings they do not want the caller to free.
inline const char* thread_local_string(std::string s) {
  thread_local std::string storage;
  storage = std::move(s);
  return storage.c_str();
}

}  // namespace graphrt
