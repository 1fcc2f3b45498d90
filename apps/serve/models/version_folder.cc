#include "models/version_folder.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include "graphrt/error.h"

namespace graphrt_serve {

std::vector<std::string> version_folder_files(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (!d) throw graphrt::Error(graphrt::ErrorKind::kNotFound, "cannot open the version folder").with("dir", dir);
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.empty() || n[0] == '.') continue;
    struct stat st;
    if (stat((dir + "/" + n).c_str(), &st) == 0 && S_ISREG(st.st_mode)) files.push_back(n);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace graphrt_serve
