// A params-cache file changed under the running server (truncated or rewritten in place, which
// the docs tell operators not to do, but a stray `truncate` or a copy over it happens): a
// truncated mapped file made every replica using it fault (SIGBUS) on the pages gone, and one
// rewritten in place gave 200s computed from other bytes. A CacheGuard watches one model's
// cache: the SIGBUS handler (install_sigbus_handler) replaces a faulting cache mapping with
// zero pages, so the run goes on instead of killing the process, and marks it damaged; after
// each run the model asks changed(), which also compares the file's size, inode and ctime
// (which no write leaves unchanged) with what they were at load. A changed cache fails the
// request and the model stays unavailable until it is loaded again: never a 200 from it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace graphrt_serve {

class CacheGuard {
 public:
  // Watches the mapping of `path` this process made (found in /proc/self/maps). watching() is
  // false when there is none (the model did not map it).
  explicit CacheGuard(const std::string& path);
  ~CacheGuard();
  CacheGuard(const CacheGuard&) = delete;
  CacheGuard& operator=(const CacheGuard&) = delete;

  bool watching() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // "" while the file is as it was at load and none of its pages faulted; else why not.
  std::string changed() const;

 private:
  std::string path_;
  int fd_ = -1;
  off_t size_ = 0;
  long ctime_sec_ = 0, ctime_nsec_ = 0;
  std::vector<int> slots_;  // the SIGBUS registry's entries of the mapping's ranges
};

// Installs the SIGBUS handler that CacheGuard relies on (once, from main). A fault outside a
// watched mapping keeps the default action (the process ends with SIGBUS, as before).
void install_sigbus_handler();

}  // namespace graphrt_serve
