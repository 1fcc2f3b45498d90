// Exception-to-error-code conversion at the C ABI boundary.
#pragma once

#include <exception>

#include "graphrt/export.h"
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

// The calling thread's Python exception object (TVM's Python-error calls);
// set_last_error forgets it.
void set_last_python_error(void* py_object, const std::string& message);
void* last_python_error();
// True for the per-thread byte array RetValue::release_to_c hands out.
bool is_returned_byte_array(const TVMByteArray* bytes);

inline const char* thread_local_string(std::string s) {
  thread_local std::string storage;
  storage = std::move(s);
  return storage.c_str();
}

}  // namespace graphrt
