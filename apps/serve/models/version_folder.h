// The files of a model version folder (DIR/<model>/<version>/): what both the one-model and the
// several-batch-sizes layouts are recognised from.
#pragma once

#include <string>
#include <vector>

namespace graphrt_serve {

// The regular files of `dir`, sorted, without hidden ones; a folder that cannot be opened is a
// not-found error naming it.
std::vector<std::string> version_folder_files(const std::string& dir);

}  // namespace graphrt_serve
