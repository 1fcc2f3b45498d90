#include "models/private_copy.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace graphrt_serve {

using graphrt::Error;

namespace {

// $TMPDIR/graphrt-serve.XXXXXX (mode 0700), made on first use and removed at exit; it stays
// empty between loads.
class PrivateFolder {
 public:
  const std::string& path() {
    std::call_once(once_, [this] {
      const char* tmp = getenv("TMPDIR");
      std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/graphrt-serve.XXXXXX";
      if (mkdtemp(&templ[0]))
        path_ = templ;
      else
        error_ = errno;
    });
    if (path_.empty())
      throw Error(Error::kind_of_errno(error_), std::string("cannot make a private folder for model copies: ") +
                                                    std::strerror(error_))
          .with("dir", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return path_;
  }
  ~PrivateFolder() {
    if (!path_.empty()) rmdir(path_.c_str());
  }

 private:
  std::once_flag once_;
  std::string path_;
  int error_ = 0;
};

PrivateFolder& folder() {
  static PrivateFolder f;
  return f;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

PrivateCopy::PrivateCopy(const std::string& source) : source_(source) {
  static std::atomic<unsigned> counter{0};
  const size_t slash = source.find_last_of('/');
  const std::string base = slash == std::string::npos ? source : source.substr(slash + 1);
  const std::string copy = folder().path() + "/" + std::to_string(counter++) + "-" + base;
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = in < 0 ? errno : EINVAL;
    if (in >= 0) ::close(in);
    throw Error(Error::kind_of_errno(err), std::string("cannot read the model file: ") +
                                               (in < 0 ? std::strerror(err) : "not a regular file"))
        .with("file", source);
  }
  const int out = ::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  int err = out < 0 ? errno : 0;
  off_t left = st.st_size;
  while (!err && left > 0) {
    ssize_t n = copy_file_range(in, nullptr, out, nullptr, static_cast<size_t>(left), 0);
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      char buf[1 << 16];  // no in-kernel copy between these file systems: read and write
      n = ::read(in, buf, sizeof buf);
      for (ssize_t done = 0; n > 0 && done < n;) {
        const ssize_t w = ::write(out, buf + done, static_cast<size_t>(n - done));
        if (w < 0) {
          n = -1;
          break;
        }
        done += w;
      }
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    else if (n == 0) break;  // the file shrank while copied: what was read is the copy
    else left -= n;
  }
  ::close(in);
  if (out >= 0) ::close(out);
  if (err) {
    if (out >= 0) ::unlink(copy.c_str());
    throw Error(Error::kind_of_errno(err), std::string("cannot copy the model file for loading: ") + std::strerror(err))
        .with("file", source)
        .with("copy", copy);
  }
  copy_ = copy;
}

PrivateCopy::~PrivateCopy() {
  if (!copy_.empty()) ::unlink(copy_.c_str());
}

Error PrivateCopy::original(const Error& e) const {
  Error out(e.kind(), replace_all(e.message(), copy_, source_));
  for (const auto& kv : e.context()) out.with(kv.first, replace_all(kv.second, copy_, source_));
  return out;
}

}  // namespace graphrt_serve
