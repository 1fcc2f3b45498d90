// Where fixtures are required (CI), a missing fixtures folder fails tests
// instead of skipping them (tests/test_support.h).
#include <cstdlib>
#include <string>

#include "test_support.h"

namespace {

// Sets an environment variable for one scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace

TEST(FixturePolicy, CiOrTheFlagRequiresFixtures) {
  {
    ScopedEnv ci("CI", "true");
    ScopedEnv flag("GRAPHRT_REQUIRE_FIXTURES", nullptr);
    EXPECT_TRUE(graphrt_test::fixtures_required());
  }
  {
    ScopedEnv ci("CI", nullptr);
    ScopedEnv flag("GRAPHRT_REQUIRE_FIXTURES", "1");
    EXPECT_TRUE(graphrt_test::fixtures_required());
  }
}

TEST(FixturePolicy, ElsewhereMissingFixturesSkip) {
#if defined(GRAPHRT_FIXTURES_REQUIRED) && GRAPHRT_FIXTURES_REQUIRED
  GTEST_SKIP() << "this build requires fixtures (GRAPHRT_REQUIRE_FIXTURES=ON)";
#endif
  ScopedEnv ci("CI", nullptr);
  ScopedEnv flag("GRAPHRT_REQUIRE_FIXTURES", "0");
  EXPECT_FALSE(graphrt_test::fixtures_required());
}
