// Opening the files graphrt is handed (models, graphs, params, .npy, .tar,
// VM bytecode and assembly, dynamic modules, plugins): the one way every
// layer and app does it.
//
// A path may name a FIFO, a device such as /dev/zero, a socket or a
// directory; reading one of those blocks forever, never ends or fails with a
// stream error that names nothing. So a file is opened without blocking,
// must be a regular file, and is read only up to a bound the caller states.
// Every refusal names the file and what it was to be.
#pragma once

#include "graphrt/export.h"

#include <cstddef>
#include <string>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// The bound on files read whole when the caller states none: far above any
// graph JSON, program text or params file of a model graphrt runs.
constexpr size_t kDefaultFileReadLimit = size_t(4) << 30;

// The whole regular file at `path`, opened as RegularFile opens it (below)
// and refused, before any byte is read, when it is larger than `limit`.
// `what` says what the file is for ("graph JSON", "input .npy").
std::string read_regular_file(const std::string& path, const std::string& what,
                              size_t limit = kDefaultFileReadLimit);

}  // namespace graphrt
#pragma GCC visibility pop

// The rest is the library's own (not exported).
namespace graphrt {

// An open regular file (the descriptor closes with the object).
class RegularFile {
 public:
  // Opens `path` for reading. `what` says what the file is for ("model",
  // "graph JSON", "input .npy"). Throws a not-found error when it does not
  // exist, and an invalid-argument one when it is a directory, a FIFO, a
  // device or a socket.
  RegularFile(const std::string& path, const std::string& what);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // The whole file; refused, before any byte is read, when it is larger than
  // `limit`. A file that shrinks while read is an error too.
  std::string read_all(size_t limit = kDefaultFileReadLimit) const;
  // Up to `n` bytes from `offset` (fewer at the end of the file).
  std::string read_at(size_t offset, size_t n) const;

 private:
  std::string path_;
  std::string what_;
  int fd_ = -1;
  size_t size_ = 0;
};

// Throws as RegularFile's constructor does when `path` is not a regular file
// that can be opened; for paths handed on to dlopen, which would block on a
// FIFO itself.
void require_regular_file(const std::string& path, const std::string& what);

}  // namespace graphrt
