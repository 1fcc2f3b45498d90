// The server loads a model from a private copy of its file, never from the repository's file:
// dlopen maps the file it is given, so a model .so overwritten in place under a running server
// changed (or crashed: SIGSEGV) the code it ran, and a `load` of a replaced file kept the old
// code (dlopen returns the handle it already has for a path). A copy in a folder only this
// process uses, under a name no load used before, fixes both; it is unlinked once loaded (the
// mappings keep its pages).
#pragma once

#include <string>

#include "graphrt/error.h"

namespace graphrt_serve {

class PrivateCopy {
 public:
  // Copies `source` (a regular file) into the process's private folder. Throws graphrt::Error
  // naming the file.
  explicit PrivateCopy(const std::string& source);
  ~PrivateCopy();  // unlinks the copy
  PrivateCopy(const PrivateCopy&) = delete;
  PrivateCopy& operator=(const PrivateCopy&) = delete;

  const std::string& path() const { return copy_; }
  // `e` with the copy's path put back as the repository's, in its message and context.
  graphrt::Error original(const graphrt::Error& e) const;

 private:
  std::string source_, copy_;
};

}  // namespace graphrt_serve
