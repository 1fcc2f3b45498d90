// Every file an app writes appears whole or not at all.
#pragma once

#include <string>

namespace graphrt_apps {

// Writes `bytes` beside `path` under a temporary name, then renames it over
// `path`: an interrupted or failed write never leaves a truncated .npy, .vmbc,
// blob or trace where a reader expects a complete one, nor destroys the file
// that was there. Throws graphrt::Error("cannot write <what>") naming the file.
void write_output_file(const std::string& path, const std::string& bytes, const std::string& what);

}  // namespace graphrt_apps
