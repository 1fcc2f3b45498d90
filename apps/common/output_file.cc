#include "common/output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "graphrt/error.h"

namespace graphrt_apps {

namespace {

bool write_fully(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void write_output_file(const std::string& path, const std::string& bytes, const std::string& what) {
  std::string temporary = path + ".partial-XXXXXX";
  int fd = mkstemp(&temporary[0]);
  if (fd < 0) throw graphrt::Error(graphrt::Error::kind_of_errno(errno),
                                   "cannot write " + what + ": " + std::strerror(errno)).with("file", path);
  // mkstemp creates 0600; an output file gets the usual permissions.
  const mode_t mask = umask(0);
  umask(mask);
  int error = 0;
  if (fchmod(fd, 0666 & ~mask) != 0 || !write_fully(fd, bytes)) error = errno ? errno : EIO;
  if (::close(fd) != 0 && !error) error = errno;
  if (!error && std::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (!error) return;
  std::remove(temporary.c_str());
  throw graphrt::Error("cannot write " + what + ": " + std::strerror(error)).with("file", path);
}

}  // namespace graphrt_apps
