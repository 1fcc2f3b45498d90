// TVM's error calls beyond TVMGetLastError/TVMAPISetLastError: Python
// exception objects recorded by front ends, backtraces, and rethrowing.
#include "abi/c_api_support.h"
#include "graphrt/tvm_abi.h"

using namespace graphrt;

extern "C" GRAPHRT_API void TVMAPISetLastPythonError(void* py_object) {
  set_last_python_error(py_object, "a Python exception was raised inside a packed function (TVMGetLastPythonError)");
}

extern "C" GRAPHRT_API void* TVMGetLastPythonError(void) { return last_python_error(); }

extern "C" GRAPHRT_API void TVMDropLastPythonError(void) {
  if (last_python_error()) set_last_error("");
}

// graphrt's errors say where they come from in their context pairs, not in a
// stack trace; TVM returns NULL for errors without one too.
extern "C" GRAPHRT_API const char* TVMGetLastBacktrace(void) { return nullptr; }

// The one function of the C API that throws: TVM defines it as the way C++
// callers turn a failed C call back into an exception.
extern "C" GRAPHRT_API void TVMThrowLastError(void) { throw last_error_as_exception(); }
