// The one exception-to-error-code guard at every extern "C" boundary, for the
// core and for the layers above it that define C functions of their own.
#pragma once

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "graphrt/error.h"
#include "graphrt/packed_func.h"

namespace graphrt {

// Records the exception being handled as the thread's last error, with its
// kind; returns the kind. Called only from inside a catch block.
inline ErrorKind record_current_exception() {
  try {
    throw;
  } catch (const Error& e) {
    set_last_error(e.what(), e.kind());
    return e.kind();
  } catch (const std::bad_alloc&) {
    // No message can be built when memory is gone; the literal needs none.
    set_last_error("out of memory", ErrorKind::kResourceExhausted);
    return ErrorKind::kResourceExhausted;
  } catch (const std::out_of_range& e) {
    set_last_error(e.what(), ErrorKind::kOutOfRange);
    return ErrorKind::kOutOfRange;
  } catch (const std::length_error& e) {
    set_last_error(e.what(), ErrorKind::kResourceExhausted);
    return ErrorKind::kResourceExhausted;
  } catch (const std::invalid_argument& e) {
    set_last_error(e.what(), ErrorKind::kInvalidArgument);
    return ErrorKind::kInvalidArgument;
  } catch (const std::exception& e) {
    // Anything else thrown from inside graphrt is a condition it failed to
    // report as an Error.
    set_last_error(e.what(), ErrorKind::kInternal);
    return ErrorKind::kInternal;
  } catch (...) {
    set_last_error("unknown C++ exception", ErrorKind::kInternal);
    return ErrorKind::kInternal;
  }
}

// TVM's C ABI (TVM* functions): runs `body`; returns 0, or -1 with the
// exception's message and kind as last error (TVM's contract is -1 for every
// failure; graphrt_last_error_kind() tells the kind).
template <typename F>
int c_api_guard(F&& body) {
  try {
    body();
    return 0;
  } catch (...) {
    record_current_exception();
  }
  return -1;
}

// graphrt's own C API (graphrt_* functions): as c_api_guard, but a failure
// returns the negated kind (-3 for not found), so that a C caller can branch
// on the code without a second call.
template <typename F>
int graphrt_api_guard(F&& body) {
  try {
    body();
    return 0;
  } catch (...) {
    return -static_cast<int>(record_current_exception());
  }
}

// A string that stays valid until the calling thread's next call: how C
// functions hand out strings they do not want the caller to free.
inline const char* thread_local_string(std::string s) {
  thread_local std::string storage;
  storage = std::move(s);
  return storage.c_str();
}

}  // namespace graphrt
