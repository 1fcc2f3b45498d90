#include "graphrt/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graphrt/error.h"

namespace graphrt {

namespace {

const char* special_file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Error open_error(const std::string& what, const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR)
    return Error(ErrorKind::kNotFound, "cannot open " + what + ": no such file").with("file", path);
  return Error(Error::kind_of_errno(err), "cannot open " + what + ": " + std::strerror(err)).with("file", path);
}

}  // namespace

RegularFile::RegularFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw open_error(what, path, errno);
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw open_error(what, path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(what + " is " + special_file_kind(st.st_mode) + ", not a regular file").with("file", path);
  }
  size_ = static_cast<size_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RegularFile::read_all(size_t limit) const {
  if (size_ > limit) {
    throw Error(ErrorKind::kResourceExhausted, what_ + " is " + std::to_string(size_) + " bytes, more than the " +
                                                   std::to_string(limit) + " bytes graphrt reads")
        .with("file", path_);
  }
  std::string bytes = read_at(0, size_);
  if (bytes.size() != size_)
    throw Error(what_ + " shrank while it was read (" + std::to_string(bytes.size()) + " of " +
                std::to_string(size_) + " bytes)")
        .with("file", path_);
  return bytes;
}

std::string RegularFile::read_at(size_t offset, size_t n) const {
  std::string bytes(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, &bytes[got], n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Error("cannot read " + what_ + ": " + std::strerror(errno)).with("file", path_);
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  bytes.resize(got);
  return bytes;
}

std::string read_regular_file(const std::string& path, const std::string& what, size_t limit) {
  return RegularFile(path, what).read_all(limit);
}

void require_regular_file(const std::string& path, const std::string& what) { RegularFile file(path, what); }

}  // namespace graphrt
