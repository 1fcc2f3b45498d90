// The one list of device-API instances shut down at exit (src/layer_api/exit_shutdown.h), as
// the CUDA, OpenCL and Vulkan back ends use it: in a child process that exits, every listed
// instance is shut down once, whatever the number of registrations, and a forgotten one not.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "layer_api/exit_shutdown.h"

namespace {

class Announcing final : public graphrt::ExitShutdown {
 public:
  explicit Announcing(const char* name) : name_(name) {}
  void shutdown() override {
    ++calls_;
    std::fprintf(stderr, "[%s shut down %d]", name_, calls_);
  }

 private:
  const char* name_;
  int calls_ = 0;
};

void exit_with_three_listed_and_one_forgotten() {
  static Announcing a("a"), b("b"), c("c");  // alive while the exit handlers run
  graphrt::shut_down_at_exit(&a);
  graphrt::shut_down_at_exit(&b);
  graphrt::shut_down_at_exit(&c);
  graphrt::forget_at_exit(&b);
  std::fflush(stderr);
  std::exit(0);
}

TEST(ExitShutdown, ListedInstancesAreShutDownOnceAtExit) {
  // Three registrations of the handler: the first to run shuts a and c down, the others find
  // the list empty (a second "shut down 2" would show a repeat).
  EXPECT_EXIT(exit_with_three_listed_and_one_forgotten(), ::testing::ExitedWithCode(0),
              "\\[a shut down 1\\]\\[c shut down 1\\]$");
}

TEST(ExitShutdown, ForgettingAnUnlistedInstanceDoesNothing) {
  Announcing never("never");
  graphrt::forget_at_exit(&never);
  SUCCEED();
}

}  // namespace
