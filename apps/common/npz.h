// .npz (numpy's np.savez: a zip archive of .npy members, one per array) for the command-line
// apps: tvmc's format for a model's inputs and outputs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "npy.h"

namespace graphrt_apps {

// The arrays of `path` in archive order, named as numpy names them (the member name without
// ".npy"). Members must be stored, as np.savez writes them; np.savez_compressed members are
// refused by name. Throws graphrt::Error naming the file and member.
std::vector<std::pair<std::string, NpyArray>> read_npz(const std::string& path);
// The same from the archive's bytes (untrusted: every offset and size is checked); `path` only
// names the source in errors.
std::vector<std::pair<std::string, NpyArray>> parse_npz(const std::string& bytes, const std::string& path);

struct NpzEntry {
  std::string name;  // the array's name; the member is name + ".npy"
  std::string npy;   // the member's bytes (encode_npy)
};
// Writes an archive np.load reads (stored members, CRC-32 checked by numpy's zipfile).
void write_npz(const std::string& path, const std::vector<NpzEntry>& entries);

}  // namespace graphrt_apps
