// What the layers above the core register for the one diagnosis of user
// mistakes (graphrt/user_mistakes.h), and what the core answers from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/runtime.h"
#include "graphrt/user_mistakes.h"

namespace graphrt {

// A kind of file graphrt reads that is not a model library.
struct MisplacedFileKind {
  std::string what;    // "a params file (TVM's save_param_dict format)"
  std::string advice;  // where it goes instead
  std::string option;  // the API option it belongs to ("params"), or ""
  // True when these first bytes (at most kLibraryProbeBytes) are of this kind.
  bool (*probe)(const uint8_t* head, size_t size) = nullptr;
};

void register_misplaced_file_kind(Runtime& runtime, MisplacedFileKind kind);
// `hint` completes "this is <...>": what a module of `type_key` is and how it is used.
void register_module_usage_hint(Runtime& runtime, const std::string& type_key, const std::string& hint);

// check_model_library_file for the first bytes of `origin`, already read.
void check_model_library_head(const uint8_t* head, size_t size, const std::string& origin);
// The same against the kinds registered in `runtime`.
void check_model_library_head(Runtime& runtime, const uint8_t* head, size_t size, const std::string& origin);
// The hint registered for `type_key` ("" when none), in the default runtime or in `runtime`.
std::string module_usage_hint(const std::string& type_key);
std::string module_usage_hint(const Runtime& runtime, const std::string& type_key);

}  // namespace graphrt
