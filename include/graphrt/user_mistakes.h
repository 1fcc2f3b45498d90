// One diagnosis of a user's mistakes, for every entry point (C++, the C API,
// Python, the apps, the server): a file handed to graphrt as a model library
// that is another file graphrt reads (a params file, a graph JSON, an input
// array), and a module used as another kind (a Relax executable given as a
// graph's kernels library or asked for a graph factory's `default`).
//
// The layers that own a format register what it looks like and where it goes
// (src/layer_api/user_mistakes.h: the graph layer its params and graph JSON,
// the Relax back end its executables); every load_module checks a file
// against them, require_function and the graph executor name a module's kind.
// Messages name API options in their "option" context value, never a flag.
#pragma once

#include <string>
#include <vector>

#include "graphrt/export.h"

namespace graphrt {

// What `path` is when it is one of those files ("a params file (TVM's
// save_param_dict format)"), else "" (also when it cannot be read: the loader
// reports that).
GRAPHRT_API std::string describe_misplaced_file(const std::string& path);
// Throws an Error [file, option] when `path`, given as a model library, is one
// of those: "<path> is a params file (...), not a model library: <advice>".
GRAPHRT_API void check_model_library_file(const std::string& path);
// "Did you mean": up to `limit` of `candidates` close to `name` (by edit distance, or one
// containing the other), comma separated, closest first; "" when none is close.
GRAPHRT_API std::string closest_matches(const std::string& name, const std::vector<std::string>& candidates,
                                        size_t limit);

}  // namespace graphrt
