// The core's side of the C API: the guard, and the per-thread state TVM's
// Python-error calls and returned byte arrays need.
#pragma once

#include <string>

#include "graphrt/export.h"
#include "graphrt/packed_func.h"
#include "layer_api/c_api_guard.h"

namespace graphrt {

// A message set through TVM's C ABI (TVMAPISetLastError): its kind is read
// from a TVM-style class prefix ("IndexError: ..."), else invalid argument.
void set_last_error_from_tvm(const std::string& message);
// The calling thread's Python exception object (TVM's Python-error calls);
// set_last_error forgets it.
void set_last_python_error(void* py_object, const std::string& message);
void* last_python_error();
// True for the per-thread byte array RetValue::release_to_c hands out.
bool is_returned_byte_array(const TVMByteArray* bytes);

}  // namespace graphrt
