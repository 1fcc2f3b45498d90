// Helpers of the tests that run graphrt against fake_libcuda.c.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "fake_libcuda.h"

namespace cuda_fake {

// Before the runtime starts (tests call it in their bodies): graphrt opens
// the fake, which reports two devices.
inline const int kEnvSet = setenv("GRAPHRT_CUDA_DRIVER", GRAPHRT_FAKE_LIBCUDA, 1) |
                           setenv("FAKE_CUDA_DEVICES", "2", 1);

// The fake's recorded state, from the very library graphrt opened
// (GRAPHRT_CUDA_DRIVER is set to it before the runtime starts).
inline fake_cuda_state* state() {
  static fake_cuda_state* s = [] {
    void* h = dlopen(GRAPHRT_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
    return h ? static_cast<fake_cuda_state*>(dlsym(h, "fake_cuda_state")) : nullptr;
  }();
  return s;
}

// A driver entry point of the fake, to act as another library would.
template <typename Fn>
Fn entry(const char* name) {
  void* h = dlopen(GRAPHRT_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
  return h ? reinterpret_cast<Fn>(dlsym(h, name)) : nullptr;
}

// The calls logged from here on.
class LogMark {
 public:
  LogMark() : start_(state()->log_len) {}
  std::string since() const { return std::string(state()->log + start_, state()->log_len - start_); }

 private:
  size_t start_;
};

// How often `token` occurs in `log`.
inline int count(const std::string& log, const std::string& token) {
  int n = 0;
  for (size_t at = log.find(token); at != std::string::npos; at = log.find(token, at + 1)) ++n;
  return n;
}

}  // namespace cuda_fake
